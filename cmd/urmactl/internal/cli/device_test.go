package cli_test

import (
	"bytes"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/urma-go/sdk/cmd/urmactl/internal/cli"
	_ "github.com/urma-go/sdk/provider/loopback"
	"github.com/urma-go/sdk/urma"
)

func TestDeviceListLoopback(t *testing.T) {
	var b bytes.Buffer
	require.NoError(t, cli.DeviceList(&b, cli.DeviceListOptions{}))
	assert.Contains(t, b.String(), "NAME       PROVIDER  TRANSPORT  EIDS  PORTS  STATE\n")
	assert.Contains(t, b.String(), "loopback0  loopback  loopback   4     1      ACTIVE\n")
}

func TestDeviceShowUnknown(t *testing.T) {
	var b bytes.Buffer
	err := cli.DeviceShow(&b, cli.DeviceShowOptions{Name: "nope"})
	require.Error(t, err)
	assert.True(t, errors.Is(err, urma.ErrNotFound))
	assert.Empty(t, b.String())
}

func TestRootCommand(t *testing.T) {
	root := cli.New()
	var out, errOut bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&errOut)
	root.SetArgs([]string{"device", "list", "-o", "wide"})
	require.NoError(t, root.Execute())
	assert.Contains(t, out.String(), "MAX_MSG")
	assert.Contains(t, out.String(), "RM,RC,UM")

	root = cli.New()
	root.SetOut(&out)
	root.SetErr(&errOut)
	root.SetArgs([]string{"device", "show"})
	require.Error(t, root.Execute(), "show needs a name")
}
