package sheet

import (
	"slices"
	"strings"
	"testing"
)

// TestHeaderRow: which row names the columns, told through CSV files.
func TestHeaderRow(t *testing.T) {
	for _, tt := range []struct {
		what, csv string
		want      []string
	}{
		{"the first row, all distinct text", "Name,Age\nAda,36\n", []string{"Name, Age", "Name: Ada, Age: 36"}},
		{"empty rows and cells before it", "\n,,\n,Name,Age\n,Ada,36\n", []string{"Name, Age", "Name: Ada, Age: 36"}},
		{"a number: no header", "Year,2024\nAda,36\n", []string{"A: Year, B: 2024", "A: Ada, B: 36"}},
		{"a percentage is a number", "Name,12%\n", []string{"A: Name, B: 12%"}},
		{"a date is a number", "Name,2024-03-15\n", []string{"A: Name, B: 2024-03-15"}},
		{"the same text twice: no header", "Name,Name\nAda,Bob\n", []string{"A: Name, B: Name", "A: Ada, B: Bob"}},
		{"a title above the header", "Sales 2024\nRegion,Units\nNorth,120\n", []string{"Sales 2024", "Region, Units", "Region: North, Units: 120"}},
		{"a one-cell header above one-cell rows", "Names\nAda\nBob\n", []string{"Names", "Names: Ada", "Names: Bob"}},
		{"a one-cell header above numbers", "Total\n1,2\n", []string{"Total", "Total: 1, B: 2"}},
		{"a one-cell sheet", "alone\n", []string{"alone"}},
		{"letters past the header and for its empty cells", "Name,,Age\nAda,x,36,extra\n", []string{"Name, Age", "Name: Ada, B: x, Age: 36, D: extra"}},
		{"empty cells are left out", "a,b,c\n1,,3\n", []string{"a, b, c", "a: 1, c: 3"}},
		{"white space and line breaks in cells", "\" Name \",\"Long\n  note\"\n x ,\"y\r\nz\"\n", []string{"Name, Long note", "Name: x, Long note: y z"}},
	} {
		doc := extractOK(t, CSV{}, csvProfile, []byte(tt.csv), "t.csv")
		if got := texts(doc); !slices.Equal(got, tt.want) {
			t.Errorf("%s: got %q, want %q", tt.what, got, tt.want)
		}
	}
}

// TestLongHeader: a header cell labels its values with at most
// maxLabelBytes of itself, since it is repeated in every row; the header
// row itself is whole.
func TestLongHeader(t *testing.T) {
	long := strings.Repeat("h", 300)
	doc := extractOK(t, CSV{}, csvProfile, []byte(long+",b\n1,2\n"), "t.csv")
	if got, want := texts(doc), []string{long + ", b", strings.Repeat("h", maxLabelBytes) + ": 1, b: 2"}; !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestAppendColumn(t *testing.T) {
	for col, want := range map[int]string{0: "A", 25: "Z", 26: "AA", 51: "AZ", 701: "ZZ", 702: "AAA", maxColumns - 1: "XFD"} {
		if got := string(appendColumn(nil, col)); got != want {
			t.Errorf("column %d: %q, want %q", col, got, want)
		}
	}
}

func TestLooksNumeric(t *testing.T) {
	for s, want := range map[string]bool{
		"12": true, "-3.5": true, "1,234.50": true, "12.5%": true, "$5": true, "5 €": true, "(7)": true,
		"2024-03-15": true, "15/03/2024": true, "10:30": true, "1 234,5": true,
		"": false, "Q1": false, "1st": false, "-": false, "N/A": false, "%": false, "3 kg": false,
	} {
		if got := looksNumeric(s); got != want {
			t.Errorf("%q: %v, want %v", s, got, want)
		}
	}
}

func TestCleanCell(t *testing.T) {
	for in, want := range map[string]string{
		"plain":                 "plain",
		"  padded  ":            "padded",
		"two  spaces":           "two spaces",
		"line\nbreak\r\ntab\tx": "line break tab x",
		"ctl\x01\x1b[0mchar":    "ctl[0mchar",
		"bad\xffbyte":           "bad\ufffdbyte",
		"nbsp\u00a0and\u2003em": "nbsp and em",
		"\u00a0":                "",
	} {
		if got := cleanCell(in); got != want {
			t.Errorf("%q: %q, want %q", in, got, want)
		}
	}
}
