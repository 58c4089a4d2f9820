package pdf

import (
	"bytes"
	"regexp"
	"strconv"
)

// Image scan: pdfimages reads every page again and encodes every image it
// meets, so running it costs as much as pdftotext or, on a file with a giant
// soft mask (issue16263.pdf: a 34862x4332 mask drawn 40 times), seconds. The
// raw bytes say which images there are: an image is a stream object, and
// stream objects never sit inside compressed object streams, so its
// dictionary is readable as it is. pdfimages runs only when one of them is
// worth keeping: at least 32x32 (smaller ones are dropped after extraction
// anyway) and at most maxImagePixels. Masks count: a scanned page is often a
// stencil mask painted black, and a soft mask may be all a picture shows.

// maxImagePixels: a larger picture (beyond 4096x4096; a 300 dpi scan of A4 fits)
// is not worth a second pass over the file, nor its memory.
const maxImagePixels = 16 << 20

var (
	subtypeImage = regexp.MustCompile(`/Subtype\s*/Image\b`)
	objHeader    = regexp.MustCompile(`\d+\s+\d+\s+obj\b`)
	dictInt      = func(key string) *regexp.Regexp {
		return regexp.MustCompile(`/` + key + `\s+(\d+)(\s+\d+\s+R)?`)
	}
	widthKey  = dictInt("Width")
	heightKey = dictInt("Height")
)

// scanWindow bounds how far from /Subtype /Image its object header and
// stream keyword are looked for.
const scanWindow = 4096

// HasPictures reports whether the file has an image XObject worth extracting
// (the name says what users get from it: the pictures a page shows).
// Inline images in compressed content streams are not seen (they are small
// by nature); an image whose size is an indirect reference counts.
func HasPictures(data []byte) bool {
	for _, loc := range subtypeImage.FindAllIndex(data, -1) {
		from := max(0, loc[0]-scanWindow)
		to := min(len(data), loc[1]+scanWindow)
		before, after := data[from:loc[0]], data[loc[1]:to]
		// The dictionary runs from its object header to the stream keyword.
		start := 0
		if hs := objHeader.FindAllIndex(before, -1); len(hs) > 0 {
			start = hs[len(hs)-1][1]
		}
		end := len(after)
		if i := bytes.Index(after, []byte("stream")); i >= 0 {
			end = i
		}
		dict := append(append(append([]byte{}, before[start:]...), ' '), after[:end]...)
		w, wKnown := dictValue(widthKey, dict)
		h, hKnown := dictValue(heightKey, dict)
		if !wKnown || !hKnown {
			return true // sizes elsewhere: let pdfimages decide
		}
		if w >= 32 && h >= 32 && w*h <= maxImagePixels {
			return true
		}
	}
	return false
}

// dictValue reads a direct integer; known is false when the value is an
// indirect reference or missing.
func dictValue(key *regexp.Regexp, dict []byte) (v int, known bool) {
	m := key.FindSubmatch(dict)
	if m == nil || len(m[2]) > 0 {
		return 0, false
	}
	v, err := strconv.Atoi(string(m[1]))
	return v, err == nil && v >= 0
}
