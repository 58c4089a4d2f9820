package testservers

import (
	"bufio"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
)

func TestFreePortsAreBelowTheEphemeralRangeAndNeverRepeat(t *testing.T) {
	lo := ephemeralLow()
	seen := map[int]bool{}
	for range 20 {
		ports, err := FreePorts(5)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range ports {
			if p < lowestPort || p >= lo {
				t.Errorf("port %d outside [%d, %d)", p, lowestPort, lo)
			}
			if seen[p] {
				t.Errorf("port %d handed out twice", p)
			}
			seen[p] = true
			l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p))
			if err != nil {
				t.Errorf("port %d is not free: %v", p, err)
				continue
			}
			l.Close()
		}
	}
}

func TestFreePortPairsAreConsecutive(t *testing.T) {
	pairs, err := FreePortPairs(4)
	if err != nil {
		t.Fatal(err)
	}
	for _, pr := range pairs {
		if pr[1] != pr[0]+1 {
			t.Errorf("pair %v is not consecutive", pr)
		}
		if !PortFree(pr[0]) || !PortFree(pr[1]) {
			t.Errorf("pair %v is not free", pr)
		}
	}
}

// TestAPortClaimedByAnotherProcessIsNotHandedOut: ports this process's
// child claimed (as its FreePorts would) cannot be claimed here until the
// child exits.
func TestAPortClaimedByAnotherProcessIsNotHandedOut(t *testing.T) {
	if os.Getenv("STRATA_PORTS_CHILD") != "" {
		var ports []int
		for _, f := range strings.Fields(os.Getenv("STRATA_PORTS_CHILD")) {
			p, _ := strconv.Atoi(f)
			ports = append(ports, p)
		}
		var claimed []string // others' tests may hold some of them
		for _, p := range ports {
			if claimAcrossProcesses(p) {
				claimed = append(claimed, strconv.Itoa(p))
			}
		}
		fmt.Println("claimed", strings.Join(claimed, " "))
		io.Copy(io.Discard, os.Stdin) // hold the claims until the parent closes stdin
		return
	}
	var ports []string // 20 ports no test of this process was handed
	for p := 11000 + rand.IntN(5000); len(ports) < 20; p++ {
		portsMu.Lock()
		mine := handedOut[p]
		portsMu.Unlock()
		if !mine {
			ports = append(ports, strconv.Itoa(p))
		}
	}
	child := exec.Command(os.Args[0], "-test.run=^TestAPortClaimedByAnotherProcessIsNotHandedOut$")
	child.Env = append(os.Environ(), "STRATA_PORTS_CHILD="+strings.Join(ports, " "))
	stdin, err := child.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := child.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	claimed := strings.Fields(line)
	if err != nil || len(claimed) < 11 || claimed[0] != "claimed" {
		t.Fatalf("the child claimed too few of 20 ports: %q, %v", line, err)
	}
	ports = claimed[1:]
	for _, f := range ports {
		p, _ := strconv.Atoi(f)
		if claimAcrossProcesses(p) {
			t.Fatalf("port %d, claimed by another process, was claimed here too", p)
		}
	}
	stdin.Close()
	if err := child.Wait(); err != nil {
		t.Fatal(err)
	}
	p, _ := strconv.Atoi(ports[0])
	if !claimAcrossProcesses(p) {
		t.Fatalf("port %d still claimed after its process exited", p)
	}
}
