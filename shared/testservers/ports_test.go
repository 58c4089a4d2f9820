package testservers

import (
	"net"
	"strconv"
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
