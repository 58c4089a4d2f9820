package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/strata-kb/strata/ingestor/extract/pdf/pdftest"
	"github.com/strata-kb/strata/ingestor/extract/pdf/pdfwrite"
	"github.com/strata-kb/strata/ingestor/extract/pdf/pictures"
)

// TestRun: pictures on stdout, status 3 for a picture left to pdfimages,
// 1 with the reason on stderr for a file it cannot parse, 2 for bad flags.
func TestRun(t *testing.T) {
	kinds := map[string]pdfwrite.Picture{}
	for _, k := range pdftest.PictureKinds() {
		kinds[k.Name] = k.Picture
	}
	withPictures := pdfwrite.Make([]pdfwrite.Page{{Lines: []string{"a"}, Image: true}, {Lines: []string{"b"}, Image: true}}, nil)
	for _, tc := range []struct {
		name   string
		args   []string
		stdin  []byte
		status int
		found  int
		stderr string
	}{
		{"pictures", nil, withPictures, 0, 2, ""},
		{"max pictures", []string{"-max-pictures", "1"}, withPictures, 0, 1, ""},
		{"max pages", []string{"-max-pages", "1"}, withPictures, 0, 1, ""},
		{"cmyk colour", nil, pdfwrite.Make([]pdfwrite.Page{{Lines: []string{"a"}, Pictures: []pdfwrite.Picture{kinds["cmyk"]}}}, nil), pictures.ExitUnsupported, 0, "DeviceCMYK"},
		{"not a pdf", nil, []byte("hello"), 1, 0, "parse"},
		{"bad flag", []string{"-max-pictures", "many"}, withPictures, 2, 0, "invalid value"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			status := run(tc.args, bytes.NewReader(tc.stdin), &stdout, &stderr)
			if status != tc.status || !strings.Contains(stderr.String(), tc.stderr) {
				t.Fatalf("status %d, stderr %q; want %d and %q", status, stderr.String(), tc.status, tc.stderr)
			}
			if status != 0 {
				return
			}
			pics, err := pictures.ReadFrom(&stdout)
			if err != nil || len(pics) != tc.found {
				t.Fatalf("%d pictures, %v; want %d", len(pics), err, tc.found)
			}
		})
	}
}
