package odt

import (
	"encoding/xml"
)

// encrypted reads META-INF/manifest.xml and reports whether content.xml
// is encrypted: a password-protected document lists
// manifest:encryption-data under the file entries it encrypted.
func encrypted(t *tokens) (bool, error) {
	const nsManifest = "urn:oasis:names:tc:opendocument:xmlns:manifest:1.0"
	entry, found := "", false
	err := t.each(func(tok xml.Token) error {
		se, ok := tok.(xml.StartElement)
		if !ok || se.Name.Space != nsManifest {
			return nil
		}
		switch se.Name.Local {
		case "file-entry":
			entry = attr(se, nsManifest, "full-path")
		case "encryption-data":
			found = found || entry == contentPart
		}
		return nil
	})
	return found, err
}
