package embedding

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/nats-io/nats.go"

	"github.com/strata-kb/strata/shared/pipeline"
	"github.com/strata-kb/strata/shared/worker"
)

type fakeProvider struct {
	dims  int
	calls int
	texts []string
	fail  error
}

func checksum(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

func (f *fakeProvider) Model() string   { return "fake-model" }
func (f *fakeProvider) Dimensions() int { return f.dims }
func (f *fakeProvider) Embed(_ context.Context, texts []string) ([][]float32, error) {
	f.calls++
	f.texts = append(f.texts, texts...)
	if f.fail != nil {
		return nil, f.fail
	}
	out := make([][]float32, len(texts))
	for i, t := range texts {
		out[i] = make([]float32, f.dims)
		out[i][0] = float32(len(t))
	}
	return out, nil
}

type recorder struct {
	subject, msgID string
	data           []byte
	n              int
}

func (r *recorder) Publish(_ context.Context, subject, msgID string, _ map[string]string, data []byte) error {
	r.subject, r.msgID, r.data = subject, msgID, data
	r.n++
	return nil
}

func fileVersion(n int) pipeline.FileVersion {
	fv := pipeline.FileVersion{Object: pipeline.Object{Project: "acme", Path: "a.md"}, FileID: "f", FileVersionID: "v"}
	for i := range n {
		content := strings.Repeat("x", i+1)
		fv.Chunks = append(fv.Chunks, pipeline.Chunk{ID: string(rune('a' + i)), Index: i, Content: content, SourceChecksum: checksum(content)})
	}
	return fv
}

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

func TestEmbedsInBatchesAndPublishesOnce(t *testing.T) {
	p := &fakeProvider{dims: 4}
	pub := &recorder{}
	e := New(p, pub, nil, 2, quiet)
	if err := e.EmbedFileVersion(context.Background(), fileVersion(5)); err != nil {
		t.Fatal(err)
	}
	if p.calls != 3 || pub.n != 1 || pub.subject != "strata.embeddings.acme" || pub.msgID != "v-fake-model" {
		t.Fatalf("calls %d publishes %d subject %q id %q", p.calls, pub.n, pub.subject, pub.msgID)
	}
	var v pipeline.Vectors
	if err := json.Unmarshal(pub.data, &v); err != nil {
		t.Fatal(err)
	}
	if len(v.Chunks) != 5 || v.Chunks[4].Vector[0] != 5 || v.Model != "fake-model" || v.Dimensions != 4 {
		t.Fatalf("%+v", v)
	}
}

func TestNoProviderPublishesNothing(t *testing.T) {
	pub := &recorder{}
	if err := New(nil, pub, nil, 2, quiet).EmbedFileVersion(context.Background(), fileVersion(3)); err != nil || pub.n != 0 {
		t.Fatalf("err %v publishes %d", err, pub.n)
	}
}

func TestProviderErrorIsReturnedForRetry(t *testing.T) {
	p := &fakeProvider{dims: 4, fail: errors.New("429 too many requests")}
	pub := &recorder{}
	err := New(p, pub, nil, 2, quiet).EmbedFileVersion(context.Background(), fileVersion(3))
	if err == nil || !strings.Contains(err.Error(), "429") || pub.n != 0 {
		t.Fatalf("err %v publishes %d", err, pub.n)
	}
}

// refusing publishes as NATS refuses a message over max_payload.
type refusing struct{ recorder }

func (r *refusing) Publish(context.Context, string, string, map[string]string, []byte) error {
	r.n++
	return fmt.Errorf("publish strata.embeddings.acme: %w", nats.ErrMaxPayload)
}

// TestVectorsOverTheMessageLimitAreDeadLettered: vectors no retry can make
// fit go to the dead letters with the reason, holding nothing else up.
func TestVectorsOverTheMessageLimitAreDeadLettered(t *testing.T) {
	pub := &refusing{}
	err := New(&fakeProvider{dims: 4}, pub, nil, 2, quiet).EmbedFileVersion(context.Background(), fileVersion(3))
	if !worker.IsPermanent(err) || !strings.Contains(err.Error(), "over the NATS message limit") || !strings.Contains(err.Error(), "a.md") {
		t.Fatalf("err %v (permanent: %v)", err, worker.IsPermanent(err))
	}
}

// A container's members are documents of their own: each gets its own
// vectors message, under its own file version id, beside the container's.
func TestEachMemberGetsItsOwnVectors(t *testing.T) {
	fv := fileVersion(2)
	member := fileVersion(3)
	member.Object.Path, member.FileID, member.FileVersionID = "a.md//notes.txt", "fm", "vm"
	empty := fileVersion(0)
	empty.Object.Path, empty.FileVersionID = "a.md//empty.txt", "ve"
	fv.Members = []pipeline.FileVersion{member, empty}
	pub := &multiRecorder{}
	if err := New(&fakeProvider{dims: 4}, pub, nil, 2, quiet).EmbedFileVersion(context.Background(), fv); err != nil {
		t.Fatal(err)
	}
	if len(pub.ids) != 2 || pub.ids[0] != "v-fake-model" || pub.ids[1] != "vm-fake-model" {
		t.Fatalf("published %v, want the container's and the member's vectors", pub.ids)
	}
	var v pipeline.Vectors
	if err := json.Unmarshal(pub.data[1], &v); err != nil {
		t.Fatal(err)
	}
	if v.FileID != "fm" || v.Object.Path != "a.md//notes.txt" || len(v.Chunks) != 3 {
		t.Fatalf("member's vectors %+v", v)
	}
}

type multiRecorder struct {
	ids  []string
	data [][]byte
}

func (r *multiRecorder) Publish(_ context.Context, _, msgID string, _ map[string]string, data []byte) error {
	r.ids, r.data = append(r.ids, msgID), append(r.data, data)
	return nil
}

// A member whose vectors are over the message limit loses its vector
// search alone: the members after it are embedded.
func TestAMemberOverTheMessageLimitLeavesTheRest(t *testing.T) {
	fv := fileVersion(1)
	big, after := fileVersion(2), fileVersion(1)
	big.Object.Path, big.FileVersionID = "a.md//big.txt", "vb"
	after.Object.Path, after.FileVersionID = "a.md//after.txt", "va"
	fv.Members = []pipeline.FileVersion{big, after}
	pub := &refusingOne{id: "vb-fake-model"}
	if err := New(&fakeProvider{dims: 4}, pub, nil, 2, quiet).EmbedFileVersion(context.Background(), fv); err != nil {
		t.Fatal(err)
	}
	if strings.Join(pub.ids, " ") != "v-fake-model va-fake-model" {
		t.Fatalf("published %v, want the container's and the member after the refused one", pub.ids)
	}
}

// refusingOne refuses the message with id as over the server's limit.
type refusingOne struct {
	id  string
	ids []string
}

func (r *refusingOne) Publish(_ context.Context, _, msgID string, _ map[string]string, _ []byte) error {
	if msgID == r.id {
		return fmt.Errorf("publish: %w", nats.ErrMaxPayload)
	}
	r.ids = append(r.ids, msgID)
	return nil
}
