// Command strata-pdf-pictures reads a PDF on stdin and writes the pictures
// its pages draw to stdout (package pictures' wire format). The ingestor
// runs it once per PDF with pictures, under the same memory and time limits
// as poppler's tools, in place of pdfimages: it parses the file instead of
// laying out every page a second time. It exits with status 3 when the file
// draws a picture it does not read (the ingestor then runs pdfimages) and 1
// on any other failure, with the reason on stderr.
//
// It is a binary of its own, not a mode of the ingestor, because it starts
// once per file: its start costs about a millisecond, the ingestor's ~18 ms.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/debug"

	"github.com/strata-kb/strata/ingestor/extract/pdf/pictures"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("strata-pdf-pictures", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var lim pictures.Limits
	fs.IntVar(&lim.MaxPages, "max-pages", 2000, "pages read, from the first")
	fs.IntVar(&lim.MaxPictures, "max-pictures", 64, "pictures written")
	fs.Int64Var(&lim.MaxImageBytes, "max-image-bytes", 8<<20, "largest encoded picture kept")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	// A recursion in a hostile file stops at a small stack, not at the
	// address-space limit.
	debug.SetMaxStack(64 << 20)
	data, err := io.ReadAll(stdin)
	if err != nil {
		fmt.Fprintln(stderr, "read stdin:", err)
		return 1
	}
	pics, err := pictures.Read(data, lim)
	if err != nil {
		fmt.Fprintln(stderr, err)
		if errors.Is(err, pictures.ErrUnsupported) {
			return pictures.ExitUnsupported
		}
		return 1
	}
	if err := pictures.Write(stdout, pics); err != nil {
		fmt.Fprintln(stderr, "write:", err)
		return 1
	}
	return 0
}
