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
	"github.com/strata-kb/strata/ingestor/extract/plaintext"
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

// TestAnArchiveIsReadMemberByMember: the member list, then for each
// member a heading naming its path and a line saying what it is and
// where it is read: by its own format's reader, into a member of the
// archive at its path (a text file, a DOCX with its footnote, a PDF, and a
// zip inside, whose own member is a member of its). No member's text is
// in the archive's.
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
	paths := extracttest.MemberPaths(doc)
	if want := "project/notes.txt project/docs/report.docx project/manual.pdf project/inner.zip project/inner.zip//deep.txt"; strings.Join(paths, " ") != want {
		t.Fatalf("members %q, want %s", paths, want)
	}
	for path, want := range map[string]struct{ format, marker string }{
		"project/notes.txt":           {"text", "zipnotesmarker"},
		"project/docs/report.docx":    {"docx", "docxfootnotemarker"},
		"project/manual.pdf":          {"pdf", "zipmanualmarker"},
		"project/inner.zip":           {"zip", "deep.txt"},
		"project/inner.zip//deep.txt": {"text", "zipinnermarker"},
	} {
		m := extracttest.Member(doc, path)
		if m.Format != want.format || !strings.Contains(m.Text, want.marker) {
			t.Errorf("%s: %s %q; want %s with %s in it", path, m.Format, extract.Truncate(m.Text, 300), want.format, want.marker)
		}
		if strings.Contains(path, "//") {
			continue
		}
		line, ok := extracttest.Under(doc, "Member: "+path)
		if !ok || !strings.HasPrefix(line, want.format+", ") || !strings.HasSuffix(line, " bytes, read as a document of its own: "+path) {
			t.Errorf("under Member: %s: %v %q", path, ok, line)
		}
		if strings.HasPrefix(want.marker, "zip") || strings.HasPrefix(want.marker, "docx") {
			if strings.Contains(doc.Text, want.marker) {
				t.Errorf("the text of %s is in the archive's", path)
			}
		}
	}
	if strings.Contains(doc.Text, "zipinnermarker") || strings.Contains(extracttest.Member(doc, "project/inner.zip").Text, "zipinnermarker") {
		t.Error("the inner archive's member's text is in a container's text")
	}
	if len(doc.Warnings) != 0 {
		t.Errorf("warnings %q", doc.Warnings)
	}
}

// TestMembersOfOneNameAreMadeUnique: two entries of one path are two
// members ("notes.txt", "notes (2).txt"), each line says where its own is.
func TestMembersOfOneNameAreMadeUnique(t *testing.T) {
	doc := extractArchive(t, "twice.zip", zipOf(t, member{"notes.txt", []byte("firstmarker")}, member{"./notes.txt", []byte("secondmarker")}), extract.DefaultLimits())
	if got := extracttest.MemberPaths(doc); strings.Join(got, "|") != "notes.txt|notes (2).txt" {
		t.Fatalf("members %q", got)
	}
	if a, b := extracttest.Member(doc, "notes.txt"), extracttest.Member(doc, "notes (2).txt"); !strings.Contains(a.Text, "firstmarker") || !strings.Contains(b.Text, "secondmarker") {
		t.Errorf("members %q and %q", a.Text, b.Text)
	}
	for _, line := range []string{"read as a document of its own: notes.txt\n", "read as a document of its own: notes (2).txt"} {
		if !strings.Contains(doc.Text, line) {
			t.Errorf("no %q in %q", line, doc.Text)
		}
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

// TestHostileArchives: each hostile member is recorded with its reason on
// the archive that holds it, and every other member is read into a member
// of its own.
func TestHostileArchives(t *testing.T) {
	lim := extract.DefaultLimits()
	lim.MaxUncompressed = 4 << 20
	beside := member{"beside.txt", []byte("Read beside it: zipbesidemarker.")}
	tests := []struct {
		name        string
		data        []byte
		wantWarning string // in a warning, and under the member's heading
		member      string // the member's heading ("" for none)
		members     string // the members' paths, joined with spaces
	}{
		{"bomb.zip", zipOf(t, member{"zeros.bin", bomb(64 << 20)}, beside), "past the", "Member: zeros.bin", "beside.txt"},
		{"docx-bomb.zip", zipOf(t, member{"report.docx", zipBombDOCX(t)}, beside), "report.docx not read", "Member: report.docx", "beside.txt"},
		{"escape.zip", zipOf(t, member{"../../etc/passwd", []byte("root:x:0:0 zipescapemarker")}, beside), "", "Member: etc/passwd", "etc/passwd beside.txt"},
		{"absolute.zip", zipOf(t, member{"/etc/shadow", []byte("zipabsolutemarker")}, beside), "", "Member: etc/shadow", "etc/shadow beside.txt"},
		{"bidi.zip", zipOf(t, member{"invoice\u202egpj.exe", []byte("x")}, member{"ctl\x07name.txt", []byte("zipctlmarker")}, beside), "", "Member: ctlname.txt", "invoicegpj.exe ctlname.txt beside.txt"},
		{"encrypted.zip", encrypted(zipOf(t, member{"secret.txt", []byte("hidden")})), "encrypted", "Member: secret.txt", ""},
		{"crc.zip", badCRC(t), "corrupt", "Member: broken.txt", "fine.txt"},
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
			if err := extracttest.CheckLimits(doc, lim); err != nil {
				t.Error(err)
			}
			w := strings.Join(doc.Warnings, "\n")
			if tc.wantWarning != "" && !strings.Contains(w, tc.wantWarning) {
				t.Errorf("warnings %q, want %q", w, tc.wantWarning)
			}
			if tc.member != "" {
				got, ok := extracttest.Under(doc, tc.member)
				if !ok || tc.wantWarning != "" && !strings.Contains(got, "not read") {
					t.Errorf("under %q: %v %q, in %q", tc.member, ok, got, extract.Truncate(doc.Text, 500))
				}
			}
			if got := strings.Join(extracttest.MemberPaths(doc), " "); got != tc.members {
				t.Errorf("members %q, want %q", got, tc.members)
			}
			for _, m := range []struct{ path, marker string }{{"beside.txt", "zipbesidemarker"}, {"fine.txt", "zipfinemarker"}, {"ctlname.txt", "zipctlmarker"}} {
				if d := extracttest.Member(doc, m.path); d != nil && !strings.Contains(d.Text, m.marker) {
					t.Errorf("%s: %q, want %s", m.path, d.Text, m.marker)
				}
			}
			for _, text := range append([]string{doc.Text}, extracttest.MemberPaths(doc)...) {
				if strings.Contains(text, "../") || strings.Contains(text, "\u202e") || strings.Contains(text, "\x07") {
					t.Errorf("a path, control or bidi character kept: %q", extract.Truncate(text, 300))
				}
			}
		})
	}
}

// TestNestingStopsAtMaxDepth: zips in zips 6 deep are read 3 deep
// (container.MaxDepth); the innermost archive read records, on itself,
// the one it holds as not read with the reason, and nothing deeper is
// read.
func TestNestingStopsAtMaxDepth(t *testing.T) {
	doc := extractArchive(t, "deep.zip", nested(t, 6, "zipdeepmarker"), extract.DefaultLimits())
	if got := strings.Join(extracttest.MemberPaths(doc), " "); got != "next.zip next.zip//next.zip" {
		t.Fatalf("members %q, want two archives, one in the other", got)
	}
	last := extracttest.Member(doc, "next.zip//next.zip")
	if w := strings.Join(last.Warnings, "\n"); !strings.Contains(w, "member next.zip not read") || !strings.Contains(w, "nest deeper than 3") {
		t.Errorf("the archive that stopped: warnings %q", w)
	}
	if got, ok := extracttest.Under(last, "Member: next.zip"); !ok || !strings.Contains(got, "nest deeper than 3") {
		t.Errorf("the archive that stopped: %q", last.Text)
	}
	if len(doc.Warnings) != 0 || len(doc.Members[0].Doc.Warnings) != 0 {
		t.Errorf("what the innermost archive cut is recorded on its containers too: %q, %q", doc.Warnings, doc.Members[0].Doc.Warnings)
	}
	for _, d := range []*extract.Document{doc, doc.Members[0].Doc, last} {
		if strings.Contains(d.Text, "zipdeepmarker") {
			t.Error("a member nested deeper than the bound was read")
		}
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
	// An empty member is said under its heading, not a document of its own.
	if got, _ := extracttest.Under(doc, "Member: empty-000999.txt"); got != "(empty)" || len(doc.Members) != 0 {
		t.Errorf("empty members: %q, %d members", got, len(doc.Members))
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
	if fast := extracttest.Member(doc, "fast.txt"); fast == nil || !strings.Contains(fast.Text, "zipfastmarker") || len(doc.Members) != 1 {
		t.Errorf("the member after a slow one: %q", extracttest.MemberPaths(doc))
	}
	if w := strings.Join(doc.Warnings, "\n"); !strings.Contains(w, "member slow.txt not read: extraction took too long") {
		t.Errorf("warnings %q", w)
	}
}

// TestAMemberOverWhatIsLeftIsCut: a member whose text does not fit what
// the archive has left of MaxTextBytes (its members' text counted) is
// recorded with the reason, the members after it that fit are read, and
// the archive with its members stays within the limit.
func TestAMemberOverWhatIsLeftIsCut(t *testing.T) {
	data := zipOf(t, member{"a.txt", []byte("first member, zipfirstmarker")},
		member{"b.txt", []byte(strings.Repeat("words of a long member ", 400))},
		member{"c.txt", []byte("zipthirdmarker")})
	full := extractArchive(t, "cut.zip", data, extract.DefaultLimits())
	lim := extract.DefaultLimits()
	lim.MaxTextBytes = extract.TextWithMembers(full) - 2000
	doc := extractArchive(t, "cut.zip", data, lim)
	if n := extract.TextWithMembers(doc); n > lim.MaxTextBytes {
		t.Errorf("%d bytes of text with the members', over the %d limit", n, lim.MaxTextBytes)
	}
	if got := strings.Join(extracttest.MemberPaths(doc), " "); got != "a.txt c.txt" {
		t.Errorf("members %q, want a.txt c.txt", got)
	}
	if got, _ := extracttest.Under(doc, "Member: b.txt"); !strings.Contains(got, "not read") || !strings.Contains(got, "MaxTextBytes") {
		t.Errorf("under b.txt: %q", got)
	}
	if w := strings.Join(doc.Warnings, "\n"); !strings.Contains(w, "member b.txt not read") || !strings.Contains(w, "MaxTextBytes") {
		t.Errorf("warnings %q", w)
	}
	// With room for nothing past the list, the archive says where it stopped.
	lim.MaxTextBytes = strings.Index(full.Text, "Member: a.txt") + 5
	doc = extractArchive(t, "cut.zip", data, lim)
	if w := strings.Join(doc.Warnings, "\n"); !strings.Contains(w, "members from a.txt on were not read") || len(doc.Members) != 0 {
		t.Errorf("warnings %q, %d members", w, len(doc.Members))
	}
}

// TestMembersShareTheArchivesBudget: members read into documents of their
// own hold against the archive's budget (MaxFileBytes): under a budget
// that holds some of them, those are read, the rest recorded with the
// budget's name, and what the archive and its members hold stays within
// it.
func TestMembersShareTheArchivesBudget(t *testing.T) {
	var members []member
	for i := range 20 {
		members = append(members, member{fmt.Sprintf("part%02d.md", i), []byte(strings.Repeat(fmt.Sprintf("A paragraph of part %d.\n\n", i), 50))})
	}
	data := zipOf(t, members...)
	full := extractArchive(t, "parts.zip", data, extract.DefaultLimits())
	lim := extract.DefaultLimits()
	lim.MaxFileBytes = extract.HeldWithMembers(full) / 2
	doc := extractArchive(t, "parts.zip", data, lim)
	if err := extracttest.CheckLimits(doc, lim); err != nil {
		t.Error(err)
	}
	if n := extract.HeldWithMembers(doc); n > lim.MaxFileBytes {
		t.Errorf("holds %d bytes with its members, over the %d budget", n, lim.MaxFileBytes)
	}
	if len(doc.Members) == 0 || len(doc.Members) >= 20 {
		t.Errorf("%d members read, want some, not all", len(doc.Members))
	}
	if w := strings.Join(doc.Warnings, "\n"); !strings.Contains(w, "not read") || !strings.Contains(w, "MaxFileBytes") {
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
// profile's promises, its members theirs, within the limits. Members are
// read as plain text, a name ending in .zip as an archive (their own
// readers have fuzz tests of their own).
func FuzzExtract(f *testing.F) {
	f.Add(sample(f))
	f.Add(nested(f, 5, "x"))
	f.Add(zipOf(f, member{"../../a.txt", []byte("x")}, member{"b/", nil}))
	lim := extract.DefaultLimits()
	lim.MaxTextBytes = 1 << 20
	var read func(ctx context.Context, data []byte, name string, lim extract.Limits) (*extract.Document, error)
	read = func(ctx context.Context, data []byte, name string, lim extract.Limits) (*extract.Document, error) {
		if strings.HasSuffix(name, ".zip") {
			return archive.Extractor{Member: read}.Extract(ctx, data, name, lim)
		}
		return plaintext.Extractor{}.Extract(ctx, data, name, lim)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		doc, err := archive.Extractor{Member: read}.Extract(context.Background(), data, "f.zip", lim)
		if err != nil {
			if !extracttest.Classified(err) {
				t.Fatalf("unclassified error: %v", err)
			}
			return
		}
		extracttest.Verify(t, doc, nil, profile)
		if err := extracttest.CheckLimits(doc, lim); err != nil {
			t.Fatal(err)
		}
	})
}
