package archive_test

import (
	"archive/zip"
	"bytes"
	"context"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/strata-kb/strata/ingestor/extract"
	"github.com/strata-kb/strata/ingestor/extract/archive"
	"github.com/strata-kb/strata/ingestor/extract/detect"
	"github.com/strata-kb/strata/ingestor/extract/extracttest"
	"github.com/strata-kb/strata/ingestor/extract/pdf"
	"github.com/strata-kb/strata/ingestor/extract/pdf/pdfwrite"
)

// registry reads archives as the ingestor does: members by their own
// formats' readers.
var registry = detect.NewRegistry(pdf.Poppler{})

// member is one entry of a zip made by zipOf.
type member struct {
	name string
	data []byte
}

// zipOf is a zip of members, in order, deflated ("/"-ended names are folders).
func zipOf(t testing.TB, members ...member) []byte {
	t.Helper()
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	for _, m := range members {
		w, err := zw.CreateHeader(&zip.FileHeader{Name: m.name, Method: zip.Deflate})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write(m.data); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// docx is a real DOCX made by LibreOffice (the DOCX reader's test file).
func docx(t testing.TB) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "docx", "testdata", "trailing.docx"))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// sample is an archive as a user zips a folder: a text file, a DOCX and a
// text PDF in folders, and a zip inside.
func sample(t testing.TB) []byte {
	t.Helper()
	manual := pdfwrite.MakeTitled("Manual", []pdfwrite.Page{{Lines: []string{"Installing the pump: the word is zipmanualmarker."}}}, nil)
	inner := zipOf(t, member{"deep.txt", []byte("Inside the inner archive: zipinnermarker.")})
	return zipOf(t,
		member{"project/", nil},
		member{"project/notes.txt", []byte("Notes of the launch: zipnotesmarker.\n")},
		member{"project/docs/report.docx", docx(t)},
		member{"project/manual.pdf", manual},
		member{"project/inner.zip", inner},
	)
}

func extractArchive(t *testing.T, name string, data []byte, lim extract.Limits) *extract.Document {
	t.Helper()
	doc, err := registry.Extract(context.Background(), data, name, lim)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if doc.Format != archive.Format {
		t.Fatalf("%s read as %q", name, doc.Format)
	}
	extracttest.Verify(t, doc, nil, profile)
	return doc
}

// TestAnArchiveIsReadMemberByMember: the member list, then each member
// under a heading naming its path, read by its own format's reader: a
// text file, a DOCX (its footnote too), a PDF, and a zip inside, whose own
// member is read as well.
func TestAnArchiveIsReadMemberByMember(t *testing.T) {
	doc := extractArchive(t, "uploads/launch.zip", sample(t), extract.DefaultLimits())
	if doc.Title != "launch.zip" {
		t.Errorf("title %q", doc.Title)
	}
	list, ok := extracttest.Under(doc, "Contents")
	for _, p := range []string{"project/notes.txt", "project/docs/report.docx", "project/manual.pdf", "project/inner.zip"} {
		if !ok || !strings.Contains(list, p+" (") {
			t.Errorf("the contents do not list %s: %q", p, list)
		}
	}
	if strings.Contains(list, "project/ (") {
		t.Errorf("a folder listed as a member: %q", list)
	}
	for heading, marker := range map[string]string{
		"Member: project/notes.txt":        "zipnotesmarker",
		"Member: project/docs/report.docx": "docxfootnotemarker",
		"Member: project/manual.pdf":       "zipmanualmarker",
		"Member: project/inner.zip":        "zipinnermarker",
	} {
		if got, ok := extracttest.Under(doc, heading); !ok || !strings.Contains(got, marker) {
			t.Errorf("%s: %v, %q; want %s in it", heading, ok, extract.Truncate(got, 300), marker)
		}
	}
	if len(doc.Warnings) != 0 {
		t.Errorf("warnings %q", doc.Warnings)
	}
}

// bomb is a member that deflates to n zero bytes.
func bomb(n int) []byte {
	return bytes.Repeat([]byte{0}, n)
}

// zipBombDOCX is a DOCX whose document part expands to 300 MB of XML.
func zipBombDOCX(t testing.TB) []byte {
	var body strings.Builder
	body.WriteString(`<?xml version="1.0"?><w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body>`)
	for body.Len() < 300<<20 {
		body.WriteString(strings.Repeat(`<w:p><w:r><w:t>aaaaaaaaaaaaaaaaaaaa</w:t></w:r></w:p>`, 1<<14))
	}
	return zipOf(t, member{"[Content_Types].xml", []byte(`<?xml version="1.0"?><Types/>`)}, member{"word/document.xml", []byte(body.String())})
}

// nested is a zip holding a zip ... depth deep, the innermost holding a
// text file with word.
func nested(t testing.TB, depth int, word string) []byte {
	data := zipOf(t, member{"inner.txt", []byte(word)})
	for range depth - 1 {
		data = zipOf(t, member{"next.zip", data})
	}
	return data
}

// encrypted marks every member of a zip encrypted (the flag only: no
// reader may try to read it).
func encrypted(data []byte) []byte {
	out := bytes.Clone(data)
	for _, sig := range [][]byte{{'P', 'K', 3, 4}, {'P', 'K', 1, 2}} {
		off := 6 // the flags of a local header
		if sig[2] == 1 {
			off = 8 // of a central directory entry
		}
		for i := 0; ; {
			j := bytes.Index(out[i:], sig)
			if j < 0 {
				break
			}
			out[i+j+off] |= 1
			i += j + 4
		}
	}
	return out
}

// badCRC is a zip whose one member's checksum is wrong.
func badCRC(t testing.TB) []byte {
	data := zipOf(t, member{"broken.txt", []byte("a member with a wrong checksum")}, member{"fine.txt", []byte("zipfinemarker")})
	sum := crc32.ChecksumIEEE([]byte("a member with a wrong checksum"))
	want := []byte{byte(sum), byte(sum >> 8), byte(sum >> 16), byte(sum >> 24)}
	i := bytes.Index(data, want)
	if i < 0 {
		t.Fatal("no checksum found")
	}
	for i >= 0 {
		data[i] ^= 0xff
		j := bytes.Index(data[i+1:], want)
		if j < 0 {
			break
		}
		i += 1 + j
	}
	return data
}

// TestHostileArchives: each hostile member is recorded on the archive with
// its reason, and every other member is read.
func TestHostileArchives(t *testing.T) {
	lim := extract.DefaultLimits()
	lim.MaxUncompressed = 4 << 20
	beside := member{"beside.txt", []byte("Read beside it: zipbesidemarker.")}
	tests := []struct {
		name        string
		data        []byte
		wantWarning string // in a warning, and under the member's heading
		member      string // the member's heading ("" for none)
	}{
		{"bomb.zip", zipOf(t, member{"zeros.bin", bomb(64 << 20)}, beside), "past the", "Member: zeros.bin"},
		{"docx-bomb.zip", zipOf(t, member{"report.docx", zipBombDOCX(t)}, beside), "report.docx not read", "Member: report.docx"},
		{"escape.zip", zipOf(t, member{"../../etc/passwd", []byte("root:x:0:0 zipescapemarker")}, beside), "", "Member: etc/passwd"},
		{"absolute.zip", zipOf(t, member{"/etc/shadow", []byte("zipabsolutemarker")}, beside), "", "Member: etc/shadow"},
		{"bidi.zip", zipOf(t, member{"invoice\u202egpj.exe", []byte("x")}, member{"ctl\x07name.txt", []byte("zipctlmarker")}, beside), "", "Member: ctlname.txt"},
		{"deep.zip", nested(t, 6, "zipdeepmarker"), "nest deeper than 3", ""},
		{"encrypted.zip", encrypted(zipOf(t, member{"secret.txt", []byte("hidden")})), "encrypted", "Member: secret.txt"},
		{"crc.zip", badCRC(t), "corrupt", "Member: broken.txt"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			doc, err := registry.Extract(context.Background(), tc.data, tc.name, lim)
			if tc.name == "encrypted.zip" && err != nil {
				t.Fatalf("an archive of an encrypted member: %v, want a document that says so", err)
			}
			if err != nil {
				t.Fatal(err)
			}
			extracttest.Verify(t, doc, nil, profile)
			w := strings.Join(doc.Warnings, "\n")
			if tc.wantWarning != "" && !strings.Contains(w, tc.wantWarning) {
				t.Errorf("warnings %q, want %q", w, tc.wantWarning)
			}
			if tc.member != "" {
				if _, ok := extracttest.Under(doc, tc.member); !ok {
					t.Errorf("no heading %q in %q", tc.member, extract.Truncate(doc.Text, 500))
				}
			}
			if strings.Contains(tc.name, "bomb") || strings.Contains(tc.name, "escape") || strings.Contains(tc.name, "absolute") || strings.Contains(tc.name, "bidi") {
				if got, ok := extracttest.Under(doc, "Member: beside.txt"); !ok || !strings.Contains(got, "zipbesidemarker") {
					t.Errorf("the member beside it was not read: %q", extract.Truncate(doc.Text, 500))
				}
			}
			if strings.Contains(doc.Text, "../") || strings.Contains(doc.Text, "\u202e") || strings.Contains(doc.Text, "\x07") {
				t.Errorf("a path, control or bidi character kept: %q", extract.Truncate(doc.Text, 300))
			}
			if tc.name == "deep.zip" && strings.Contains(doc.Text, "zipdeepmarker") {
				t.Error("a member nested deeper than the bound was read")
			}
			if tc.name == "crc.zip" && !strings.Contains(doc.Text, "zipfinemarker") {
				t.Error("the member beside a corrupt one was not read")
			}
		})
	}
}

// TestManyMembers: 100,000 empty members: the first 1,000 are listed and
// read, the rest counted in a warning.
func TestManyMembers(t *testing.T) {
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	for i := range 100_000 {
		if _, err := zw.Create(fmt.Sprintf("empty-%06d.txt", i)); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	doc := extractArchive(t, "many.zip", b.Bytes(), extract.DefaultLimits())
	if !strings.Contains(strings.Join(doc.Warnings, "\n"), "99000 members after the first 1000 were neither listed nor read") {
		t.Errorf("warnings %q", doc.Warnings)
	}
	if strings.Contains(doc.Text, "empty-001000.txt") || !strings.Contains(doc.Text, "empty-000999.txt") {
		t.Error("the list is not the first 1000 members")
	}
}

// TestATimeLimitPerMember: a member whose reader takes too long is
// recorded with the reason when its time (half of what the archive has
// left) is up, and the member after it is read.
func TestATimeLimitPerMember(t *testing.T) {
	slow := func(ctx context.Context, data []byte, name string, lim extract.Limits) (*extract.Document, error) {
		if name == "slow.txt" {
			<-ctx.Done()
			return nil, fmt.Errorf("%w: %v", extract.ErrTimeout, ctx.Err())
		}
		return registry.Extract(ctx, data, name, lim)
	}
	data := zipOf(t, member{"slow.txt", []byte("never read")}, member{"fast.txt", []byte("zipfastmarker")})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	doc, err := archive.Extractor{Member: slow}.Extract(ctx, data, "slow.zip", extract.DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := extracttest.Under(doc, "Member: fast.txt"); !strings.Contains(got, "zipfastmarker") {
		t.Errorf("the member after a slow one: %q", doc.Text)
	}
	if w := strings.Join(doc.Warnings, "\n"); !strings.Contains(w, "member slow.txt not read: extraction took too long") {
		t.Errorf("warnings %q", w)
	}
}

// TestAMemberOverWhatIsLeftIsCut: a member whose text does not fit what
// the archive has left of MaxTextBytes is recorded with the reason, the
// members after it that fit are read, and the document stays within the
// limit.
func TestAMemberOverWhatIsLeftIsCut(t *testing.T) {
	data := zipOf(t, member{"a.txt", []byte("first member, zipfirstmarker")},
		member{"b.txt", []byte(strings.Repeat("words of a long member ", 400))},
		member{"c.txt", []byte("zipthirdmarker")})
	full := extractArchive(t, "cut.zip", data, extract.DefaultLimits())
	lim := extract.DefaultLimits()
	lim.MaxTextBytes = len(full.Text) - 2000
	doc := extractArchive(t, "cut.zip", data, lim)
	if len(doc.Text) > lim.MaxTextBytes {
		t.Errorf("%d bytes of text, over the %d limit", len(doc.Text), lim.MaxTextBytes)
	}
	for _, want := range []string{"zipfirstmarker", "zipthirdmarker"} {
		if !strings.Contains(doc.Text, want) {
			t.Errorf("no %s in %q", want, doc.Text)
		}
	}
	if w := strings.Join(doc.Warnings, "\n"); !strings.Contains(w, "member b.txt not read") || !strings.Contains(w, "MaxTextBytes") {
		t.Errorf("warnings %q", w)
	}
	// With room for nothing past the list, the archive says where it stopped.
	lim.MaxTextBytes = strings.Index(full.Text, "Member: a.txt") + 5
	doc = extractArchive(t, "cut.zip", data, lim)
	if w := strings.Join(doc.Warnings, "\n"); !strings.Contains(w, "members from a.txt on were not read") {
		t.Errorf("warnings %q", w)
	}
}

// TestSlowMembersLeaveADocument: members that each take all the time they
// are given use up the archive's time in halves; the archive then stops
// with what it read and says so, never fails for its own deadline.
func TestSlowMembersLeaveADocument(t *testing.T) {
	slow := func(ctx context.Context, data []byte, name string, lim extract.Limits) (*extract.Document, error) {
		<-ctx.Done()
		return nil, fmt.Errorf("%w: %v", extract.ErrTimeout, ctx.Err())
	}
	var members []member
	for i := range 12 {
		members = append(members, member{fmt.Sprintf("slow-%02d.txt", i), []byte("slow")})
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	doc, err := archive.Extractor{Member: slow}.Extract(ctx, zipOf(t, members...), "slow.zip", extract.DefaultLimits())
	if err != nil {
		t.Fatalf("%v, want a document of what was read", err)
	}
	if w := strings.Join(doc.Warnings, "\n"); !strings.Contains(w, "the archive's time ran out") {
		t.Errorf("warnings %q", w)
	}
}

// TestALyingSizeHoldsLittle: members that declare 200 MiB each but hold a
// byte are not given 200 MiB (or 64 MiB) each before a byte is read.
func TestALyingSizeHoldsLittle(t *testing.T) {
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	for i := range 1000 {
		w, err := zw.CreateRaw(&zip.FileHeader{Name: fmt.Sprintf("m%04d", i), Method: zip.Store, CompressedSize64: 1, UncompressedSize64: 200 << 20, CRC32: crc32.ChecksumIEEE([]byte("x"))})
		if err != nil {
			t.Fatal(err)
		}
		w.Write([]byte("x"))
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	lim := extract.DefaultLimits()
	lim.MaxUncompressed = 1 << 40 // the declared sizes are all within it
	doc, err := registry.Extract(context.Background(), b.Bytes(), "liar.zip", lim)
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	if got := after.TotalAlloc - before.TotalAlloc; got > 256<<20 {
		t.Errorf("allocated %d MiB for 1,000 one-byte members", got>>20)
	}
	if !strings.Contains(strings.Join(doc.Warnings, "\n"), "member m0000 not read") {
		t.Errorf("warnings %q", doc.Warnings)
	}
}

// TestNotAnArchive: bytes that are no zip are corrupt, a reason users read.
func TestNotAnArchive(t *testing.T) {
	for _, data := range [][]byte{[]byte("PK\x03\x04 and then nothing"), {}} {
		if _, err := (archive.Extractor{}).Extract(context.Background(), data, "x.zip", extract.DefaultLimits()); !errors.Is(err, extract.ErrCorrupt) {
			t.Errorf("%q: %v, want ErrCorrupt", data, err)
		}
	}
}

// profile is what every archive's document promises.
var profile = extracttest.Profile{Format: archive.Format, Kinds: []extract.Kind{extract.Paragraph, extract.Heading, extract.Code, extract.Table},
	CleanText: true, CleanTitle: true, TrimmedBlocks: true}

func TestConformance(t *testing.T) {
	var big strings.Builder
	for i := 0; big.Len() < 256<<10; i++ {
		fmt.Fprintf(&big, "Paragraph %d of a long file in an archive, with words to find in it.\n\n", i)
	}
	extracttest.RunConformance(t, extracttest.Harness{
		Extractor: archive.Extractor{Member: registry.Extract},
		Profile:   profile,
		Samples: []extracttest.Sample{
			{Name: "docs.zip", Data: zipOf(t, member{"a/notes.txt", []byte("Some notes.")}, member{"a/report.docx", docx(t)})},
			{Name: "one.zip", Data: zipOf(t, member{"readme.md", []byte("# Read me\n\nA word.\n")})},
		},
		Big:         &extracttest.Sample{Name: "big.zip", Data: zipOf(t, member{"long.txt", []byte(big.String())}, member{"short.txt", []byte("short")})},
		Container:   true,
		CutsMembers: true,
		Hostile: []extracttest.Sample{
			{Name: "bomb.zip", Data: zipOf(t, member{"zeros.bin", bomb(300 << 20)})},
			{Name: "deep.zip", Data: nested(t, 20, "deep")},
			{Name: "docx-bomb.zip", Data: zipOf(t, member{"report.docx", zipBombDOCX(t)})},
		},
	})
}

// FuzzExtract: no input makes the reader panic or fail with an error
// callers cannot classify, and every document it returns keeps the
// profile's promises. Members are listed, not read: their readers have
// fuzz tests of their own.
func FuzzExtract(f *testing.F) {
	f.Add(sample(f))
	f.Add(nested(f, 5, "x"))
	f.Add(zipOf(f, member{"../../a.txt", []byte("x")}, member{"b/", nil}))
	lim := extract.DefaultLimits()
	lim.MaxTextBytes = 1 << 20
	f.Fuzz(func(t *testing.T, data []byte) {
		doc, err := archive.Extractor{}.Extract(context.Background(), data, "f.zip", lim)
		if err != nil {
			if !extracttest.Classified(err) {
				t.Fatalf("unclassified error: %v", err)
			}
			return
		}
		extracttest.Verify(t, doc, nil, profile)
	})
}
