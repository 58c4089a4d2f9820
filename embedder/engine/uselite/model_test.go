package uselite

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestEmbedBasics: the model's name and size (the conformance suite holds
// its vectors to the provider contract).
func TestEmbedBasics(t *testing.T) {
	m := testModel(t)
	if m.Model() != "use-lite-512" || m.Dimensions() != 512 {
		t.Fatalf("Model()=%q Dimensions()=%d", m.Model(), m.Dimensions())
	}
}

// TestJointGraphRun: running a whole batch through the graph at once, as
// the reference does, gives each text the vector Embed gives it (which runs
// texts in groups; the conformance suite checks that a text's vector does
// not depend on the rest of its batch).
func TestJointGraphRun(t *testing.T) {
	m := testModel(t)
	texts := []string{"short", "a somewhat longer sentence about search engines", "", "東京", longText(300, 7)}
	all, err := m.Embed(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	var batch [][]int32
	for _, s := range texts {
		batch = append(batch, m.Tokenizer().Encode(s))
	}
	joint, err := m.runBatch(batch)
	if err != nil {
		t.Fatal(err)
	}
	for k := range texts {
		if c := cosine(all[k], joint[k]); c < 0.999999 {
			t.Errorf("text %d: per-text vs joint graph run cosine %f", k, c)
		}
	}
}

func TestSemanticSimilarity(t *testing.T) {
	m := testModel(t)
	cases := []struct{ anchor, paraphrase, unrelated string }{
		{"How do I reset my password?", "I forgot my password, how can I change it?", "The weather in Paris is sunny"},
		{"The cat sat on the mat.", "A cat was sitting on a rug.", "Quarterly earnings beat analyst expectations."},
		{"Where is the nearest train station?", "How do I get to the closest railway station?", "I enjoy baking chocolate cakes."},
	}
	for _, c := range cases {
		v, err := m.Embed(context.Background(), []string{c.anchor, c.paraphrase, c.unrelated})
		if err != nil {
			t.Fatal(err)
		}
		para, unrel := cosine(v[0], v[1]), cosine(v[0], v[2])
		if para <= unrel {
			t.Errorf("%q: paraphrase cosine %.3f <= unrelated %.3f", c.anchor, para, unrel)
		}
		t.Logf("%q: paraphrase %.3f, unrelated %.3f", c.anchor, para, unrel)
	}
}

// copyModelDir copies an installed model into a temporary directory that a
// test may damage.
func copyModelDir(t *testing.T) string {
	t.Helper()
	src := testModelDir(t)
	dst := t.TempDir()
	entries, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dst, e.Name()), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dst
}

func TestLoadErrors(t *testing.T) {
	t.Run("missing dir", func(t *testing.T) {
		_, err := Load(filepath.Join(t.TempDir(), "nope"))
		if err == nil || !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("err = %v, want not-exist", err)
		}
	})
	t.Run("missing shard", func(t *testing.T) {
		dir := copyModelDir(t)
		os.Remove(filepath.Join(dir, "group1-shard3of7"))
		_, err := Load(dir)
		if err == nil || !strings.Contains(err.Error(), "group1-shard3of7") {
			t.Fatalf("err = %v, want mention of the missing shard", err)
		}
	})
	t.Run("truncated shard", func(t *testing.T) {
		dir := copyModelDir(t)
		p := filepath.Join(dir, "group1-shard7of7")
		st, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Truncate(p, st.Size()/2); err != nil {
			t.Fatal(err)
		}
		_, err = Load(dir)
		if err == nil || !strings.Contains(err.Error(), "truncated") {
			t.Fatalf("err = %v, want truncation error", err)
		}
	})
	t.Run("bad model json", func(t *testing.T) {
		dir := copyModelDir(t)
		os.WriteFile(filepath.Join(dir, "model.json"), []byte(`{"modelTopology": [`), 0o644)
		_, err := Load(dir)
		if err == nil || !strings.Contains(err.Error(), "model.json") {
			t.Fatalf("err = %v, want model.json parse error", err)
		}
	})
	t.Run("bad vocab json", func(t *testing.T) {
		dir := copyModelDir(t)
		os.WriteFile(filepath.Join(dir, "vocab.json"), []byte(`[["a", 1.0], ["b"]]`), 0o644)
		_, err := Load(dir)
		if err == nil || !strings.Contains(err.Error(), "vocab.json") {
			t.Fatalf("err = %v, want vocab.json parse error", err)
		}
	})
}

func TestInstallCachedAndVerified(t *testing.T) {
	dir := testModelDir(t)
	root := filepath.Dir(dir)
	if err := verifyInstall(root); err != nil {
		t.Fatalf("installed copy does not verify: %v", err)
	}
	// A damaged copy is detected (so Install would fetch it again).
	tmp := t.TempDir()
	cp := filepath.Join(tmp, installDirName)
	if err := os.MkdirAll(filepath.Join(cp, "dist"), 0o755); err != nil {
		t.Fatal(err)
	}
	rec, _ := os.ReadFile(filepath.Join(root, installRecord))
	os.WriteFile(filepath.Join(cp, installRecord), rec, 0o644)
	for _, name := range []string{"model.json", "vocab.json"} {
		b, _ := os.ReadFile(filepath.Join(dir, name))
		os.WriteFile(filepath.Join(cp, "dist", name), b, 0o644)
	}
	if err := verifyInstall(cp); err == nil {
		t.Fatal("incomplete install verified")
	}
	// Install on an existing verified copy returns at once without npm.
	t.Setenv("PATH", "")
	got, err := Install(context.Background(), filepath.Dir(root), nil)
	if err != nil || got != dir {
		t.Fatalf("cached Install = %q, %v; want %q", got, err, dir)
	}
	// Without npm and without a cache the error says what to do.
	if _, err := Install(context.Background(), t.TempDir(), nil); !errors.Is(err, ErrNPMNotFound) {
		t.Fatalf("Install without npm: %v", err)
	}
}

func TestExtractRejectsTraversal(t *testing.T) {
	for _, name := range []string{"package/dist/../../evil", "/package/dist/abs", "../package/dist/x"} {
		data := tarGz(t, name, "x")
		if _, err := extractDist(strings.NewReader(string(data)), t.TempDir()); err == nil {
			t.Errorf("entry %q was accepted", name)
		}
	}
	data := tarGz(t, "package/dist/ok.json", "{}")
	dest := t.TempDir()
	files, err := extractDist(strings.NewReader(string(data)), dest)
	if err != nil || len(files) != 1 {
		t.Fatalf("extract good archive: %v %v", files, err)
	}
}
