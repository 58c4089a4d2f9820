package detect

import (
	"archive/zip"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/richardlehane/mscfb"

	"github.com/strata-kb/strata/ingestor/extract"
)

// zipFormats are the zip formats read, by the part that makes each what it
// is (OOXML) or the media type its mimetype member names (ODF, EPUB).
var (
	ooxmlParts = []struct{ part, format string }{
		{"word/document.xml", DOCX}, {"ppt/presentation.xml", PPTX}, {"xl/workbook.xml", XLSX},
	}
	odfTypes = map[string]string{
		"application/vnd.oasis.opendocument.text":         ODT,
		"application/vnd.oasis.opendocument.presentation": ODP,
		"application/vnd.oasis.opendocument.spreadsheet":  ODS,
		"application/epub+zip":                            EPUB,
	}
	// zipExt is what a zip's name promises when its directory cannot be
	// read: the format's own reader then says what is wrong with it.
	zipExt = map[string]string{".docx": DOCX, ".pptx": PPTX, ".xlsx": XLSX, ".odt": ODT, ".odp": ODP, ".ods": ODS, ".epub": EPUB}
)

// maxMimetypeBytes is how much of an ODF or EPUB mimetype member is read.
const maxMimetypeBytes = 128

// zipFormat is the format of a zip file by its parts, not its name: an
// OOXML part, or the mimetype member of ODF and EPUB (and their manifest
// when the mimetype member is missing); ext decides only when the
// directory cannot be read.
func zipFormat(data []byte, ext string) (string, error) {
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil && !errors.Is(err, zip.ErrInsecurePath) {
		if f, ok := zipExt[ext]; ok {
			return f, nil
		}
		return "", fmt.Errorf("%w: zip archive whose directory cannot be read: %v", extract.ErrCorrupt, err)
	}
	names := make(map[string]*zip.File, len(zr.File))
	for _, f := range zr.File {
		names[strings.ToLower(strings.TrimPrefix(f.Name, "/"))] = f
	}
	for _, p := range ooxmlParts {
		if names[p.part] != nil {
			return p.format, nil
		}
	}
	if f := names["mimetype"]; f != nil {
		if format, ok := odfTypes[mimetypeOf(f)]; ok {
			return format, nil
		}
	}
	switch {
	case names["meta-inf/container.xml"] != nil:
		return EPUB, nil
	case names["content.xml"] != nil && names["meta-inf/manifest.xml"] != nil:
		if f, ok := zipExt[ext]; ok && (f == ODT || f == ODP || f == ODS) {
			return f, nil
		}
		return ODT, nil
	}
	// None of the document formats: an archive, whose members are read.
	return ZIP, nil
}

func mimetypeOf(f *zip.File) string {
	rc, err := f.Open()
	if err != nil {
		return ""
	}
	defer rc.Close()
	b, _ := io.ReadAll(io.LimitReader(rc, maxMimetypeBytes))
	return strings.TrimSpace(string(b))
}

// maxCFBEntries bounds the directory entries read of an OLE file.
const maxCFBEntries = 10000

// oleFormat decides what an OLE (compound file) is: an Office file saved
// with a password keeps its real content in an EncryptedPackage stream,
// whatever its name; anything else is a legacy Office file, not read.
func oleFormat(data []byte, ext string) (err error) {
	defer func() { // a hostile directory must not take the ingestor down
		if p := recover(); p != nil {
			err = fmt.Errorf("%w: OLE compound file: %v", extract.ErrCorrupt, p)
		}
	}()
	doc, cerr := mscfb.New(bytes.NewReader(data))
	if cerr != nil {
		return fmt.Errorf("%w: OLE compound file: %v", extract.ErrCorrupt, cerr)
	}
	for i := 0; i < maxCFBEntries; i++ {
		e, nerr := doc.Next()
		if nerr != nil {
			break
		}
		if e.Name == "EncryptedPackage" {
			return fmt.Errorf("%w: an Office file saved with a password (%s): remove the password and upload it again", extract.ErrEncrypted, kindOf(ext, "ole"))
		}
	}
	return fmt.Errorf("%w: legacy Office or OLE file (%s); save it as DOCX, PPTX, XLSX or PDF", extract.ErrUnsupported, kindOf(ext, "ole"))
}
