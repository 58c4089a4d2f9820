package chaos

import (
	"reflect"
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
