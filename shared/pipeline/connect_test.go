package pipeline_test

import (
	"testing"

	"github.com/strata-kb/strata/shared/pipeline"
	"github.com/strata-kb/strata/shared/testservers/serverstest"
)

// TestConnectPingsOften: every Strata client pings its server every 5 s
// and gives it up after two unanswered pings, so a paused (SIGSTOP) or
// frozen node is left within about 10 s, not nats.go's default 2 minutes.
func TestConnectPingsOften(t *testing.T) {
	nc, _, err := pipeline.Connect(serverstest.NATS(t), "ping-test", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	if nc.Opts.PingInterval != pipeline.PingInterval || pipeline.PingInterval > 5e9 || nc.Opts.MaxPingsOut != 2 {
		t.Fatalf("ping every %v, %d unanswered at most", nc.Opts.PingInterval, nc.Opts.MaxPingsOut)
	}
}
