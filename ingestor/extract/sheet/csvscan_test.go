package sheet

import (
	"encoding/csv"
	"io"
	"slices"
	"strings"
	"testing"
)

// recordsOf are text's records as scanCSV reads them.
func recordsOf(t *testing.T, text string, comma rune) [][]string {
	t.Helper()
	var records [][]string
	var rec []string
	err := scanCSV(text, comma, func(v string) error {
		rec = append(rec, v)
		return nil
	}, func() error {
		records, rec = append(records, rec), nil
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if rec != nil {
		t.Fatalf("%q: fields after the last record: %q", text, rec)
	}
	return records
}

// encodingCSV are text's records as encoding/csv reads them, as the
// reader did before scanCSV.
func encodingCSV(t *testing.T, text string, comma rune) [][]string {
	t.Helper()
	r := csv.NewReader(strings.NewReader(text))
	r.Comma, r.LazyQuotes, r.FieldsPerRecord = comma, true, -1
	var records [][]string
	for {
		rec, err := r.Read()
		if err == io.EOF {
			return records
		}
		if err != nil {
			t.Fatalf("%q: encoding/csv: %v", text, err)
		}
		records = append(records, rec)
	}
}

var csvSamples = []string{
	"a,b,c\n1,2,3\n", "a,b\r\n\r\n1,2\r\n", "\"quoted, comma\",\"say \"\"hi\"\"\"\n",
	"\"multi\nline\r\nfield\",x\n", "bare \" quote,\"lazy \" quote\",end\n", "\"unterminated\nat the end",
	"trailing cr\r", "lone\rcr,x\n", ",,\n,\n", "\"\"\n\"\"\"\"\n", "\"a\"b,c\n", "\"a\"\r\n\"b\"\r",
	"x\n\n\ny", "\"\n\"", "é;\"ü;\";ß\n", "\"a\"\"", "sep\tby\ttabs\n\"t\"\tu",
}

func TestScanCSVReadsAsEncodingCSV(t *testing.T) {
	for _, comma := range []rune{',', ';', '\t', '§'} {
		for _, text := range csvSamples {
			text = strings.ReplaceAll(text, ",", string(comma))
			if got, want := recordsOf(t, text, comma), encodingCSV(t, text, comma); !slices.EqualFunc(got, want, slices.Equal) {
				t.Fatalf("%q (comma %q):\n got %q\nwant %q", text, comma, got, want)
			}
		}
	}
}

// FuzzScanCSVMatchesEncodingCSV: on any text, scanCSV reads the records
// encoding/csv reads.
func FuzzScanCSVMatchesEncodingCSV(f *testing.F) {
	for _, s := range csvSamples {
		f.Add(s, uint8(0))
	}
	commas := []rune{',', ';', '\t', '|', '§'}
	f.Fuzz(func(t *testing.T, text string, c uint8) {
		text = strings.ToValidUTF8(text, "\uFFFD")
		comma := commas[int(c)%len(commas)]
		if got, want := recordsOf(t, text, comma), encodingCSV(t, text, comma); !slices.EqualFunc(got, want, slices.Equal) {
			t.Fatalf("%q (comma %q):\n got %q\nwant %q", text, comma, got, want)
		}
	})
}
