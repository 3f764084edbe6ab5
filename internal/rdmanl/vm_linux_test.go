package rdmanl_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/urma-go/sdk/internal/rdmanl"
	"github.com/urma-go/sdk/jetty"
	_ "github.com/urma-go/sdk/provider/ib"
	"github.com/urma-go/sdk/segment"
	"github.com/urma-go/sdk/test/vm"
	"github.com/urma-go/sdk/urma"
)

// objects are the resources of this process on one device.
type objects struct {
	qps  []rdmanl.QP
	srqs []rdmanl.SRQ
	cqs  []rdmanl.CQ
	mrs  []rdmanl.MR
}

// recordDir, when set, receives the kernel's last replies of each dump
// (rdmanl's testdata holds such a recording).
var recordDir = os.Getenv("URMA_RDMANL_RECORD")

// tapTo makes c write the buffers of its next dump to recordDir/name.
func tapTo(t *testing.T, c *rdmanl.Conn, name string) {
	if recordDir == "" {
		return
	}
	require.NoError(t, os.WriteFile(filepath.Join(recordDir, name), nil, 0o644))
	c.SetTap(func(b []byte) {
		f, err := os.OpenFile(filepath.Join(recordDir, name), os.O_APPEND|os.O_WRONLY, 0)
		require.NoError(t, err)
		_, err = f.Write(b)
		require.NoError(t, err)
		require.NoError(t, f.Close())
	})
}

// mine lists the resources of this process on dev.
func mine(t *testing.T, c *rdmanl.Conn, dev rdmanl.Device) objects {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// The kernel names the creating thread; its process is ours.
	pid := uint32(os.Getpid())
	var o objects
	tapTo(t, c, dev.Name+"-qp.nl")
	qps, err := c.QPs(ctx, dev)
	require.NoError(t, err)
	tapTo(t, c, dev.Name+"-srq.nl")
	srqs, err := c.SRQs(ctx, dev)
	require.NoError(t, err)
	tapTo(t, c, dev.Name+"-cq.nl")
	cqs, err := c.CQs(ctx, dev)
	require.NoError(t, err)
	tapTo(t, c, dev.Name+"-mr.nl")
	mrs, err := c.MRs(ctx, dev)
	require.NoError(t, err)
	c.SetTap(nil)
	for _, q := range qps {
		if q.Process == pid {
			o.qps = append(o.qps, q)
		}
	}
	for _, s := range srqs {
		if s.Process == pid {
			o.srqs = append(o.srqs, s)
		}
	}
	for _, q := range cqs {
		if q.Process == pid {
			o.cqs = append(o.cqs, q)
		}
	}
	for _, m := range mrs {
		if m.Process == pid {
			o.mrs = append(o.mrs, m)
		}
	}
	return o
}

// added is what after has and before had not, by number.
func added(before, after objects) objects {
	var o objects
	for _, q := range after.qps {
		if !hasQP(before.qps, q.QPN) {
			o.qps = append(o.qps, q)
		}
	}
	for _, s := range after.srqs {
		seen := false
		for _, b := range before.srqs {
			seen = seen || b.SRQN == s.SRQN
		}
		if !seen {
			o.srqs = append(o.srqs, s)
		}
	}
	for _, q := range after.cqs {
		seen := false
		for _, b := range before.cqs {
			seen = seen || b.CQN == q.CQN
		}
		if !seen {
			o.cqs = append(o.cqs, q)
		}
	}
	for _, m := range after.mrs {
		seen := false
		for _, b := range before.mrs {
			seen = seen || b.MRN == m.MRN
		}
		if !seen {
			o.mrs = append(o.mrs, m)
		}
	}
	return o
}

func hasQP(qps []rdmanl.QP, n uint32) bool {
	for _, q := range qps {
		if q.QPN == n {
			return true
		}
	}
	return false
}

// srqOf returns the SRQ of srqs that qpn receives through.
func srqOf(srqs []rdmanl.SRQ, qpn uint32) (rdmanl.SRQ, bool) {
	for _, s := range srqs {
		for _, r := range s.QPs {
			if r.First <= qpn && qpn <= r.Last {
				return s, true
			}
		}
	}
	return rdmanl.SRQ{}, false
}

// TestListVerbs makes known objects with the SDK on the guest's Soft-RoCE
// and soft-iWARP devices and finds them in the kernel's lists, then in
// urmactl jetty ls -d and segment ls -d.
func TestListVerbs(t *testing.T) {
	env := vm.Require(t)
	bin := buildUrmactl(t)
	record := recordDir
	for _, d := range []vm.Device{env.RXE, env.SIW} {
		recordDir = record
		t.Run(d.Name, func(t *testing.T) { testList(t, d, bin) })
	}
}

func testList(t *testing.T, d vm.Device, bin string) {
	c, err := rdmanl.Dial()
	require.NoError(t, err)
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	tapTo(t, c, "devices.nl")
	dev, err := c.DeviceByName(ctx, d.Name)
	require.NoError(t, err)
	c.SetTap(nil)

	udev, err := urma.DeviceByName(d.Name)
	require.NoError(t, err)
	uctx, err := urma.Open(udev, 0, nil)
	require.NoError(t, err)
	closed := false
	defer func() {
		if !closed {
			uctx.Close()
		}
	}()
	before := mine(t, c, dev)

	const segLen, jfcDepth = 1 << 20, 256
	jfc, err := jetty.NewJFC(uctx, jetty.JFCConfig{Depth: jfcDepth})
	require.NoError(t, err)
	jfr, err := jetty.NewJFR(uctx, jetty.JFRConfig{Depth: 64, JFC: jfc})
	require.NoError(t, err)
	jet, err := jetty.NewJetty(uctx, jetty.JettyConfig{Send: jetty.JFSConfig{Depth: 16, JFC: jfc},
		Recv: jetty.JFRConfig{Depth: 16, JFC: jfc}})
	require.NoError(t, err)
	_, err = segment.Alloc(uctx, segLen, segment.Config{Access: segment.Read | segment.Write})
	require.NoError(t, err)
	um := udev.Attr().Modes&urma.UM != 0
	const umDepth = 32
	if um {
		_, err = jetty.NewJFR(uctx, jetty.JFRConfig{Depth: umDepth, Mode: urma.UM, JFC: jfc})
		require.NoError(t, err)
	}
	// RM: advising the JFR connects an RC QP of the Jetty's to one that
	// the context accepts onto the JFR's SRQ.
	remote, err := jetty.ImportJFR(ctx, uctx, jfr.Descriptor(), 0)
	require.NoError(t, err)
	require.NoError(t, jet.Advise(ctx, remote))

	// The accepting side reaches RTS in the context's own goroutine.
	var add objects
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		add = added(before, mine(t, c, dev))
		ready := 0
		for _, q := range add.qps {
			if q.Type == rdmanl.QPTypeRC && q.State == rdmanl.QPStateRTS {
				ready++
			}
		}
		if ready == 2 {
			break
		}
		require.True(t, time.Now().Before(deadline), "two RC QPs in RTS: %+v", add.qps)
	}

	// The JFC.
	require.Len(t, add.cqs, 1, "%+v", add.cqs)
	assert.GreaterOrEqual(t, add.cqs[0].CQE, uint32(jfcDepth))
	assert.NotZero(t, add.cqs[0].Users, "the QPs report to it")

	// The JFR, the Jetty's own receive queue, and the UM JFR.
	wantSRQ := 2
	if um {
		wantSRQ++
	}
	require.Len(t, add.srqs, wantSRQ, "%+v", add.srqs)

	// The two ends of the RM connection name each other, and the
	// accepting one receives through the JFR's SRQ.
	var rc []rdmanl.QP
	var ud []rdmanl.QP
	for _, q := range add.qps {
		switch q.Type {
		case rdmanl.QPTypeRC:
			rc = append(rc, q)
		case rdmanl.QPTypeUD:
			ud = append(ud, q)
		}
	}
	require.Len(t, rc, 2, "%+v", add.qps)
	require.True(t, rc[0].HasRemote && rc[1].HasRemote)
	if d.Transport == vm.RoCE {
		assert.Equal(t, rc[0].QPN, rc[1].RemoteQPN)
		assert.Equal(t, rc[1].QPN, rc[0].RemoteQPN)
	} else {
		// iWARP carries no QP numbers: siw reports the peer's as 0.
		assert.Zero(t, rc[0].RemoteQPN)
		assert.Zero(t, rc[1].RemoteQPN)
	}
	inSRQ := 0
	for _, q := range rc {
		assert.Equal(t, uint32(1), q.Port)
		assert.NotZero(t, q.PDN)
		if _, ok := srqOf(add.srqs, q.QPN); ok {
			inSRQ++
		}
	}
	assert.Equal(t, 1, inSRQ, "the accepting QP receives through the JFR's SRQ: %+v", add.srqs)

	// The UM JFR's UD QP, on its SRQ, with a registered routing header
	// buffer.
	wantMR := 1
	if um {
		wantMR++
		require.Len(t, ud, 1, "%+v", add.qps)
		assert.Equal(t, rdmanl.QPStateRTS, ud[0].State)
		_, ok := srqOf(add.srqs, ud[0].QPN)
		assert.True(t, ok, "the UD QP receives through the UM JFR's SRQ: %+v", add.srqs)
	} else {
		assert.Empty(t, ud, "%v has no UD", d.Name)
	}
	require.Len(t, add.mrs, wantMR, "%+v", add.mrs)
	lens := map[uint64]int{}
	for _, m := range add.mrs {
		lens[m.Len]++
		assert.True(t, m.HasKeys, "root gets the keys")
		assert.Empty(t, m.Kernel)
		assert.NotZero(t, m.PDN)
	}
	assert.Equal(t, 1, lens[segLen], "%+v", add.mrs)
	if um {
		assert.Equal(t, 1, lens[umDepth*40], "the UM JFR's routing headers: %+v", add.mrs)
	}

	// urmactl lists the same, named as URMA names them.
	all := mine(t, c, dev)
	pid := os.Getpid()
	var js []struct {
		Kind     string  `json:"kind"`
		Mode     string  `json:"mode"`
		State    string  `json:"state"`
		RemoteID *uint32 `json:"remote_id"`
		OwnerPID int     `json:"owner_pid"`
	}
	require.NoError(t, json.Unmarshal(runUrmactl(t, bin, "jetty", "ls", "-d", d.Name, "-o", "json"), &js))
	kinds, modes := map[string]int{}, map[string]int{}
	for _, j := range js {
		if j.OwnerPID != pid {
			continue
		}
		kinds[j.Kind]++
		if j.Kind == "JETTY" {
			modes[j.Mode+"/"+j.State]++
		}
		if j.Mode == "RC" {
			// A peer QP number of 0 (iWARP's) is no number.
			assert.Equal(t, d.Transport == vm.RoCE, j.RemoteID != nil, "%+v", j)
		}
	}
	assert.Equal(t, map[string]int{"JETTY": len(all.qps), "JFR": len(all.srqs), "JFC": len(all.cqs)}, kinds)
	assert.Equal(t, 2, modes["RC/READY"], "%v", modes)
	if um {
		assert.Equal(t, 1, modes["UM/READY"], "%v", modes)
	}
	var segs []struct {
		Len      uint64 `json:"len"`
		OwnerPID int    `json:"owner_pid"`
	}
	require.NoError(t, json.Unmarshal(runUrmactl(t, bin, "segment", "ls", "-d", d.Name, "-o", "json"), &segs))
	n := 0
	for _, s := range segs {
		if s.OwnerPID == pid && s.Len == segLen {
			n++
		}
	}
	assert.Equal(t, 1, n, "%+v", segs)
	t.Logf("urmactl jetty ls -d %s\n%s", d.Name, runUrmactl(t, bin, "jetty", "ls", "-d", d.Name))
	t.Logf("urmactl segment ls -d %s\n%s", d.Name, runUrmactl(t, bin, "segment", "ls", "-d", d.Name))
	t.Logf("urmactl jetty ls -d %s -o wide\n%s", d.Name, runUrmactl(t, bin, "jetty", "ls", "-d", d.Name, "-o", "wide"))

	// Closing the context destroys them all (the recording keeps the
	// full lists).
	require.NoError(t, uctx.Close())
	closed = true
	recordDir = ""
	left := mine(t, c, dev)
	assert.Empty(t, left.qps)
	assert.Empty(t, left.srqs)
	assert.Empty(t, left.cqs)
	assert.Empty(t, left.mrs)
}

// buildUrmactl builds the command as cmd/urmactl's tests do, so that the
// build cache already holds it.
func buildUrmactl(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "urmactl")
	out, err := exec.Command("go", "build", "-o", bin, "github.com/urma-go/sdk/cmd/urmactl").CombinedOutput()
	require.NoError(t, err, "go build: %s", out)
	return bin
}

func runUrmactl(t *testing.T, bin string, args ...string) []byte {
	t.Helper()
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	require.NoError(t, cmd.Run(), "urmactl %v: %s", args, stderr.String())
	assert.Empty(t, stderr.String(), "urmactl %v", args)
	return stdout.Bytes()
}
