package extract

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/strata-kb/strata/shared/metadata"
)

// The keys every format maps its document properties to (HTML <meta>, DOCX
// core properties, PDF document info). Markdown front matter keeps its own
// keys, which commonly are these.
const (
	PropTitle       = "title"
	PropAuthor      = "author"
	PropSubject     = "subject"
	PropKeywords    = "keywords"
	PropDescription = "description"
	PropCreated     = "created"
	PropModified    = "modified"
)

// MaxPropBytes bounds the bytes of one property value an extractor keeps:
// a character past metadata.MaxValueBytes, so that the merge, which drops a
// longer value, still sees a value cut here is too long, and says so.
const MaxPropBytes = metadata.MaxValueBytes + utf8.UTFMax

// Props gathers what a file says about itself into typed metadata
// (Document.Metadata). A value it cannot read (a date that is no date) is
// left out with a warning: a bad property never fails a file. Keys are
// lower-cased; their validity and the size limits are the merge's to check
// (metadata.Merge), which drops what breaks them, with a warning.
type Props struct {
	source   string // where the values come from, for warnings: "PDF document info"
	meta     metadata.Metadata
	warnings []string
}

// NewProps starts the properties read from source (named in warnings).
func NewProps(source string) *Props { return &Props{source: source} }

// Set stores v under key (lower-cased), replacing any earlier value.
func (p *Props) Set(key string, v metadata.Value) {
	if p.meta == nil {
		p.meta = metadata.Metadata{}
	}
	p.meta[strings.ToLower(key)] = v
}

// Has reports whether key holds a value.
func (p *Props) Has(key string) bool {
	_, ok := p.meta[strings.ToLower(key)]
	return ok
}

// Text stores a text property, cleaned (PropText): a date when it reads as
// one (metadata.FromString), else a string. Blank text stores nothing.
func (p *Props) Text(key, s string) {
	if s = PropText(s); s != "" {
		p.Set(key, metadata.FromString(s))
	}
}

// Date stores a date property (ParseDate). Blank text stores nothing;
// anything else that is not a date is left out with a warning.
func (p *Props) Date(key, s string) {
	s = PropText(s)
	if s == "" {
		return
	}
	v, ok := ParseDate(s)
	if !ok {
		p.Warn("%s %s %q is not a date; left out", p.source, key, Truncate(s, 64))
		return
	}
	p.Set(key, v)
}

// List stores a list of strings, each cleaned, blank ones left out; an
// empty list stores nothing.
func (p *Props) List(key string, items []string) {
	var out []string
	size := 0
	for _, it := range items {
		if it = PropText(it); it != "" {
			out = append(out, it)
			// Bound memory as PropText does: a list this long is dropped
			// by the merge anyway.
			if size += len(it); len(out) > metadata.MaxListItems || size > metadata.MaxListItems*MaxPropBytes {
				break
			}
		}
	}
	if len(out) > 0 {
		p.Set(key, metadata.Value{Kind: metadata.List, List: out})
	}
}

// Keywords stores s split at any of seps (",", or ",;") as a list.
func (p *Props) Keywords(key, s, seps string) {
	p.List(key, strings.FieldsFunc(s, func(r rune) bool { return strings.ContainsRune(seps, r) }))
}

// Warn records a problem with a property.
func (p *Props) Warn(format string, args ...any) {
	p.warnings = append(p.warnings, strings.Join(strings.Fields(fmt.Sprintf(format, args...)), " "))
}

// Metadata is what was gathered, nil when nothing was.
func (p *Props) Metadata() metadata.Metadata {
	if len(p.meta) == 0 {
		return nil
	}
	return p.meta
}

// Warnings are the problems met.
func (p *Props) Warnings() []string { return p.warnings }

// BoundValue cuts a value that is over the limits of metadata.Merge, which
// drops it, to just over them, so a hostile file's megabyte value is not
// carried to the merge: text to MaxPropBytes, a list to one item more than
// metadata.MaxListItems, each item to MaxPropBytes.
func BoundValue(v metadata.Value) metadata.Value {
	v.Text = Truncate(v.Text, MaxPropBytes)
	if len(v.List) > metadata.MaxListItems+1 {
		v.List = v.List[:metadata.MaxListItems+1]
	}
	if slices.ContainsFunc(v.List, func(item string) bool { return len(item) > MaxPropBytes }) {
		v.List = slices.Clone(v.List) // the caller's list stays as it was
		for i, item := range v.List {
			v.List[i] = Truncate(item, MaxPropBytes)
		}
	}
	return v
}

// SetMetadata stores the file's own metadata on the document.
func (b *Builder) SetMetadata(m metadata.Metadata) { b.doc.Metadata = m }

// PropText cleans a property value read from a file: valid UTF-8, control
// and format characters and runs of white space made single spaces,
// trimmed, and cut to MaxPropBytes.
func PropText(s string) string {
	s = Truncate(s, 4*MaxPropBytes) // bound the work on a hostile value
	s = strings.ToValidUTF8(s, "\uFFFD")
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || unicode.Is(unicode.Cf, r) {
			return ' '
		}
		return r
	}, s)
	return Truncate(strings.Join(strings.Fields(s), " "), MaxPropBytes)
}

// ParseDate reads a date property as formats write them: what
// metadata.ParseDate reads (RFC 3339, YYYY-MM-DD), which is kept as written;
// W3C dates (DOCX: YYYY, YYYY-MM, a time without seconds or with a zone of
// hours only, as poppler prints PDF dates); a date and time with a space or
// without a zone (UTC); YYYY/MM/DD; and PDF dates, "D:YYYYMMDDHHmmSSOHH'mm'" with
// everything after the year optional. Another value is normalised to RFC
// 3339, or YYYY-MM-DD when it gives no time, so it reads as a date again
// wherever metadata is read back (metadata.FromString).
func ParseDate(s string) (metadata.Value, bool) {
	s = strings.TrimSpace(s)
	if t, ok := metadata.ParseDate(s); ok {
		return metadata.Value{Kind: metadata.Date, Text: s, Date: t}, true
	}
	if len(s) > 64 {
		return metadata.Value{}, false
	}
	t, dateOnly, ok := parsePDFDate(s)
	if !ok {
		t, dateOnly, ok = parseW3CDate(s)
	}
	if !ok {
		return metadata.Value{}, false
	}
	text := t.Format(time.RFC3339)
	if dateOnly {
		text = t.Format(time.DateOnly)
	}
	return metadata.Value{Kind: metadata.Date, Text: text, Date: t.UTC()}, true
}

// w3cLayouts are the dates and times besides RFC 3339 that document
// properties hold; the bool says the layout has no time.
var w3cLayouts = []struct {
	layout   string
	dateOnly bool
}{
	{"2006", true},
	{"2006-01", true},
	{"2006-01-02T15:04Z07:00", false},
	{"2006-01-02T15:04:05Z07", false}, // poppler: +01, not +01:00
	{"2006-01-02T15:04:05.999999999Z07", false},
	{"2006-01-02T15:04:05", false},
	{"2006-01-02T15:04:05.999999999", false},
	{"2006-01-02T15:04", false},
	{"2006-01-02 15:04:05Z07:00", false},
	{"2006-01-02 15:04:05", false},
	{"2006-01-02 15:04", false},
	{"2006/01/02", true}, // Google Scholar's citation_publication_date
}

func parseW3CDate(s string) (time.Time, bool, bool) {
	for _, l := range w3cLayouts {
		if t, err := time.Parse(l.layout, s); err == nil && t.Year() > 0 {
			return t, l.dateOnly, true
		}
	}
	return time.Time{}, false, false
}

// parsePDFDate reads a PDF date (ISO 32000-1, 7.9.4): "D:" then YYYY and
// optionally MM, DD, HH, mm, SS, then a zone: Z, or + or - with HH and
// optionally 'mm (apostrophes optional; a trailing one is common). A date
// without a zone is taken as UTC. The "D:" may be missing (older writers).
func parsePDFDate(s string) (t time.Time, dateOnly, ok bool) {
	s = strings.TrimPrefix(s, "D:")
	digits := 0
	for digits < len(s) && digits < 14 && s[digits] >= '0' && s[digits] <= '9' {
		digits++
	}
	if digits < 4 || digits%2 != 0 {
		return time.Time{}, false, false
	}
	num := func(i, def int) int {
		if i+2 > digits {
			return def
		}
		n, _ := strconv.Atoi(s[i : i+2])
		return n
	}
	year, _ := strconv.Atoi(s[:4])
	month, day, hour, minute, sec := num(4, 1), num(6, 1), num(8, 0), num(10, 0), num(12, 0)
	loc := time.UTC
	if zone := s[digits:]; zone != "" {
		if digits < 10 {
			return time.Time{}, false, false // a zone needs a time
		}
		off, ok := pdfZone(zone)
		if !ok {
			return time.Time{}, false, false
		}
		loc = time.FixedZone("", off)
	}
	if year < 1 || month < 1 || month > 12 || day < 1 || hour > 23 || minute > 59 || sec > 59 {
		return time.Time{}, false, false
	}
	t = time.Date(year, time.Month(month), day, hour, minute, sec, 0, loc)
	if t.Day() != day { // 31 February
		return time.Time{}, false, false
	}
	return t, digits <= 8, true
}

// pdfZone reads a PDF date's zone: "Z", "Z00'00'", "+HH", "+HH'mm'", "-HH'mm".
func pdfZone(z string) (int, bool) {
	sign := 1
	switch z[0] {
	case 'Z', 'z':
		z = strings.Trim(z[1:], "0'")
		return 0, z == ""
	case '+':
	case '-':
		sign = -1
	default:
		return 0, false
	}
	z = strings.ReplaceAll(z[1:], "'", "")
	if (len(z) != 2 && len(z) != 4) || strings.Trim(z, "0123456789") != "" {
		return 0, false
	}
	h, _ := strconv.Atoi(z[:2])
	m := 0
	if len(z) == 4 {
		m, _ = strconv.Atoi(z[2:])
	}
	if h > 23 || m > 59 {
		return 0, false
	}
	return sign * (h*3600 + m*60), true
}
