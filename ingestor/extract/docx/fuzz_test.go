package docx

import (
	"archive/zip"
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/strata-kb/strata/ingestor/extract"
	"github.com/strata-kb/strata/ingestor/extract/extracttest"
)

// fuzzSeeds are the starting inputs: real samples (stored ones so
// mutations reach the XML), broken archives and junk.
func fuzzSeeds(tb testing.TB) map[string][]byte {
	rich := richDocx(tb)
	small := parts(tb, para("berschrift1", "Head")+table([]string{"a", "b"})+`<w:p>`+drawingRun(1, "rId10", "alt", "")+`</w:p>`)
	delete(small, "word/media/photo.jpeg")
	delete(small, "word/media/fake.png")
	return map[string][]byte{
		"rich-deflate":   rich,
		"small-stored":   zipPartsMethod(tb, small, zip.Store),
		"small-deflate":  zipParts(tb, small),
		"truncated":      rich[:len(rich)*2/3],
		"ole-encrypted":  oleFile("EncryptionInfo"),
		"zip-magic-junk": []byte("PK\x03\x04\x14\x00\x00\x00\x08\x00junk"),
	}
}

// fuzzLimits are small so the fuzzer finds limit edges quickly.
func fuzzLimits() extract.Limits {
	return extract.Limits{
		Timeout:         10 * time.Second,
		MaxTextBytes:    64 << 10,
		MaxUncompressed: 1 << 20,
		MaxImages:       4,
		MaxImageBytes:   64 << 10,
	}
}

func FuzzExtract(f *testing.F) {
	for _, data := range fuzzSeeds(f) {
		f.Add(data)
	}
	f.Add([]byte{})
	f.Add([]byte("plain text"))
	f.Add([]byte(oleMagic))
	core := parts(f, para("", "Body."))
	core["docProps/core.xml"] = []byte(fullCoreXML)
	f.Add(zipPartsMethod(f, core, zip.Store)) // stored: its properties are there to mutate
	paged := parts(f, pagedBody())
	delete(paged, "word/media/fake.png")
	f.Add(zipPartsMethod(f, paged, zip.Store))            // stored: its page breaks are there to mutate
	f.Add(zipPartsMethod(f, trailingParts(f), zip.Store)) // stored: its headers, notes and comments are there to mutate
	f.Add(trailingFixture(f))
	f.Fuzz(func(t *testing.T, data []byte) {
		// Extraction must stop by itself within lim.Timeout. A loop that
		// ignores it would hang the fuzzer silently; crash instead, so the
		// input is saved.
		done := make(chan struct{})
		defer close(done)
		go func() {
			select {
			case <-done:
			case <-time.After(2 * fuzzLimits().Timeout):
				panic("Extract ignored its timeout")
			}
		}()
		doc, err := Extractor{}.Extract(context.Background(), data, "fuzz.docx", fuzzLimits())
		if err != nil {
			// Every failure must be one callers can classify.
			if !extracttest.Classified(err) {
				t.Fatalf("unclassified error: %v", err)
			}
			return
		}
		extracttest.Verify(t, doc, data, profileFor(doc))
		if err := extracttest.CheckLimits(doc, fuzzLimits()); err != nil {
			t.Fatal(err)
		}
		if bytes.HasPrefix(data, []byte(zipMagic)) && !Sniff(data) {
			t.Fatalf("Extract succeeded but Sniff says not a docx")
		}
	})
}

// TestFuzzSeedFiles writes the committed corpus in testdata/fuzz from
// the samples when run with -update (go test runs those files through
// FuzzExtract as ordinary tests). Contents are not compared: they hold
// deflate and PNG encoder output, which may change between Go releases.
func TestFuzzSeedFiles(t *testing.T) {
	dir := filepath.Join("testdata", "fuzz", "FuzzExtract")
	for name, data := range fuzzSeeds(t) {
		path := filepath.Join(dir, name)
		if *update {
			seed := fmt.Sprintf("go test fuzz v1\n[]byte(%q)\n", data)
			if err := os.WriteFile(path, []byte(seed), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := os.Stat(path); err != nil {
			t.Errorf("%v (run go test -update)", err)
		}
	}
}
