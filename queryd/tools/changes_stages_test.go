package tools

import (
	"testing"
	"time"

	"github.com/strata-kb/strata/shared/pipeline"
)

func TestStagesOut(t *testing.T) {
	if stagesOut(pipeline.StageTimes{}) != nil {
		t.Fatal("an object without stage times has stages")
	}
	up := time.Date(2026, 11, 25, 7, 0, 0, 0, time.UTC)
	out := stagesOut(pipeline.StageTimes{Uploaded: up, Seen: up.Add(20 * time.Millisecond), Committed: up.Add(90 * time.Millisecond)})
	if out.Uploaded != "2026-11-25T07:00:00Z" || out.Extracted != "" || out.Embedded != "" {
		t.Fatalf("stamps %+v", out)
	}
	s := out.SinceUpload
	if s.Seen == nil || *s.Seen != 20 || s.Committed == nil || *s.Committed != 90 || s.Extracted != nil || s.Embedded != nil {
		t.Fatalf("ms since upload %+v", s)
	}
	// Without the upload's time there is nothing to count from.
	if out := stagesOut(pipeline.StageTimes{Seen: up}); out.SinceUpload.Seen != nil || out.Seen == "" {
		t.Fatalf("no upload time: %+v", out)
	}
}
