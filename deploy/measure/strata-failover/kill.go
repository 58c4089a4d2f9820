package main

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/strata-kb/strata/deploy/localstack"
)

// kill is what one node's loss did to the reads.
type kill struct {
	Victim   int  // 0 is node1
	Leader   bool // the victim led the Raft group
	Answered map[string]time.Duration
	Failed   map[string]string
}

func (k kill) role() string {
	if k.Leader {
		return "Raft leader"
	}
	return "follower"
}

// slowest is the time from the kill until every read tool had answered
// completely (the deadline when one did not).
func (k kill) slowest() time.Duration {
	var d time.Duration
	for _, t := range k.Answered {
		d = max(d, t)
	}
	return d
}

// slowestTool names the read tool that answered last.
func (k kill) slowestTool() string {
	var name string
	var d time.Duration
	for tool, t := range k.Answered {
		if t > d || (t == d && tool < name) {
			name, d = tool, t
		}
	}
	return name
}

// killOnce waits until the cluster is whole, checks that every read tool
// answers, kills one node with SIGKILL, calls every read tool at once and
// starts the node again. Even kills take the Raft leader, odd ones a
// follower, so that over several kills each node goes in each role.
func (b *bench) killOnce(ctx context.Context, i int) (kill, error) {
	wait, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	nodes := b.st.Servers.WeaviateNodes()
	if err := localstack.WaitWeaviateSettled(wait, b.st.Stack, len(nodes)); err != nil {
		return kill{}, err
	}
	if _, failed := b.everyReadOnce(time.Now()); len(failed) > 0 {
		return kill{}, fmt.Errorf("reads fail before the kill: %v", failed)
	}
	leader, err := localstack.WeaviateLeader(wait, b.st.Stack)
	if err != nil {
		return kill{}, err
	}
	victim := leader
	if i%2 == 1 {
		// A follower, not the node killed last when there is a choice,
		// turning round the cluster from one follower kill to the next.
		for j := range len(nodes) {
			c := (leader + 1 + j + i/2) % len(nodes)
			if c != leader && (c != b.last || victim == leader) {
				victim = c
				if c != b.last {
					break
				}
			}
		}
	}
	b.last = victim
	k := kill{Victim: victim, Leader: victim == leader}
	killed := time.Now()
	nodes[victim].Kill()
	k.Answered, k.Failed = b.everyReadOnce(killed)
	if err := b.st.Servers.RestartWeaviateNode(ctx, victim); err != nil {
		return k, err
	}
	return k, nil
}

// toolsBySlowest lists the read tools, the slowest worst case first.
func toolsBySlowest(kills []kill) []string {
	worst := map[string]time.Duration{}
	for _, k := range kills {
		for tool, d := range k.Answered {
			worst[tool] = max(worst[tool], d)
		}
	}
	tools := make([]string, 0, len(worst))
	for tool := range worst {
		tools = append(tools, tool)
	}
	slices.SortFunc(tools, func(a, b string) int {
		if c := cmp.Compare(worst[b], worst[a]); c != 0 {
			return c
		}
		return strings.Compare(a, b)
	})
	return tools
}
