package pipeline

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// States recorded before the tags digest existed still decode (with none),
// and a state without one is written as before.
func TestObjectStateTagsDigest(t *testing.T) {
	var st ObjectState
	old := `{"key":"acme/a.md","project":"acme","etag":"e1","sequencer":"0A","state":"embedded","updated_at":"2026-11-22T00:00:00Z"}`
	if err := json.Unmarshal([]byte(old), &st); err != nil || st.TagsDigest != "" || st.ETag != "e1" || st.State != StateEmbedded {
		t.Fatalf("old state: %+v %v", st, err)
	}
	b, err := json.Marshal(st)
	if err != nil || strings.Contains(string(b), "tags_") {
		t.Fatalf("state without a digest: %s %v", b, err)
	}
	st.TagsDigest, st.TagsReadAt = "t1:abc", time.Date(2026, 11, 26, 12, 0, 0, 5, time.UTC)
	b, _ = json.Marshal(st)
	var back ObjectState
	if err := json.Unmarshal(b, &back); err != nil || back.TagsDigest != "t1:abc" || !back.TagsReadAt.Equal(st.TagsReadAt) ||
		!strings.Contains(string(b), `"tags_digest":"t1:abc"`) {
		t.Fatalf("round trip: %s %+v %v", b, back, err)
	}
}
