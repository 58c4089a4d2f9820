package chaos

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestFailuresByKill(t *testing.T) {
	got := failuresByKill([]ReadFailure{
		{At: 50 * time.Second, Context: "weaviate-3 killed at 42s, being restarted", Slow: true},
		{At: 5 * time.Second, Slow: true},
		{At: 33 * time.Second, Context: "embedder-2 killed at 20s, full service again after 4.766s", Slow: true},
		{At: 45 * time.Second, Context: "weaviate-3 killed at 42s, restarted after 8s, cluster not yet whole"},
		{At: 34 * time.Second, Context: "embedder-2 killed at 20s, full service again after 4.766s", Slow: true},
	})
	want := []killFailures{
		{kill: "no kill yet", slow: 1},
		{kill: "embedder-2 killed at 20s", slow: 2},
		{kill: "weaviate-3 killed at 42s", slow: 1, refused: 1},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v, want %+v", got, want)
	}
}

// TestFaultsTakeTurns: -faults is checked, and its kinds are injected in
// turn; a pause says how long it held its process.
func TestFaultsTakeTurns(t *testing.T) {
	kinds, err := ParseFaults("kill, pause, diskfull")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for n := range 5 {
		got = append(got, faultAt(kinds, n))
	}
	if strings.Join(got, ",") != "kill,pause,diskfull,kill,pause" || faultAt(nil, 3) != FaultKill {
		t.Fatalf("turns %v", got)
	}
	for _, bad := range []string{"disk", "kill,", "stop"} {
		if _, err := ParseFaults(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	if w := (Kill{Kind: FaultPause, Paused: 12400 * time.Millisecond}).What(); w != "pause 12s" {
		t.Errorf("a pause reads %q", w)
	}
	if w := (Kill{Kind: FaultDiskFull, Paused: 15 * time.Second}).What(); w != "diskfull 15s" {
		t.Errorf("a full disk reads %q", w)
	}
	if w := (Kill{Kind: FaultDiskFull, Skipped: "not root"}).What(); w != "diskfull (skipped)" {
		t.Errorf("a skipped full disk reads %q", w)
	}
}
