package jetty_test

import (
	"context"
	"fmt"
	"log"
	"sync"

	"github.com/urma-go/sdk/jetty"
	"github.com/urma-go/sdk/segment"
	"github.com/urma-go/sdk/urma"
)

// A jetty group spreads a client's SENDs over a server's worker Jetties,
// each with its own JFC polled by its own goroutine: under round robin
// six messages reach three workers two each.
func ExampleNewJettyGroup() {
	server, client := open(0), open(1)
	defer server.Close()
	defer client.Close()

	// Server: a group, and three workers that join it. Members are RM and
	// receive with the group's token.
	const token = 0x600d
	group := must(jetty.NewJettyGroup(server, jetty.JettyGroupConfig{Name: "workers",
		Policy: jetty.GroupPolicyRR, TokenPolicy: segment.TokenPlainText, Token: token}))
	defer group.Close() // after the workers: a group with members is not deleted
	const workers, each = 3, 2
	got := make([][]string, workers)
	var wg sync.WaitGroup
	for w := range workers {
		jfc := must(jetty.NewJFC(server, jetty.JFCConfig{Depth: 16}))
		worker := must(jetty.NewJetty(server, jetty.JettyConfig{
			Send:  jetty.JFSConfig{Depth: 8, Mode: urma.RM, JFC: jfc},
			Recv:  jetty.JFRConfig{Depth: 8, TokenPolicy: segment.TokenPlainText, Token: token},
			Group: group,
		}))
		defer worker.Close()
		buf := must(segment.Alloc(server, 64*each, segment.Config{Access: segment.LocalOnly}))
		for i := range each {
			if err := worker.Recv(buf.SGE(uint64(64*i), 64), uint64(i)); err != nil {
				log.Fatal(err)
			}
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range each {
				cr := pollOne(jfc)
				got[w] = append(got[w], string(buf.Bytes()[64*cr.UserCtx:][:cr.Len]))
			}
		}()
	}

	// Client: import the group by its descriptor and send to it as to one
	// Jetty.
	remote := must(jetty.ImportJetty(context.Background(), client, group.Descriptor(), token))
	defer remote.Close()
	cjfc := must(jetty.NewJFC(client, jetty.JFCConfig{Depth: 16}))
	jfs := must(jetty.NewJFS(client, jetty.JFSConfig{Depth: 8, Mode: urma.RM, JFC: cjfc}))
	defer jfs.Close()
	msg := must(segment.Alloc(client, 64, segment.Config{Access: segment.LocalOnly}))
	for i := range workers * each {
		n := copy(msg.Bytes()[8*i:], fmt.Sprintf("job %d", i))
		if err := jfs.Send(remote, msg.SGE(uint64(8*i), uint32(n)), 0, uint64(i)); err != nil {
			log.Fatal(err)
		}
		pollOne(cjfc)
	}
	wg.Wait()
	for w, jobs := range got {
		fmt.Println("worker", w, jobs)
	}
	// Output:
	// worker 0 [job 0 job 3]
	// worker 1 [job 1 job 4]
	// worker 2 [job 2 job 5]
}
