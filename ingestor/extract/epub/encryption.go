package epub

import (
	"encoding/xml"
	"strings"
)

// Font obfuscation (OCF 3.0 section 4.3, and Adobe's older scheme) lists
// fonts in META-INF/encryption.xml with these algorithms. It is not DRM
// and leaves the text readable; any other algorithm on a chapter (Adobe
// ADEPT, Apple FairPlay, Readium LCP all use AES) means its text cannot
// be read.
var obfuscation = map[string]bool{
	"http://www.idpf.org/2008/embedding": true,
	"http://ns.adobe.com/pdf/enc#RC":     true,
}

// encryptedParts reads META-INF/encryption.xml and returns the zip names
// of the parts encrypted with something other than font obfuscation.
// CipherReference URIs are relative to the root of the container.
func encryptedParts(t *tokens) (map[string]bool, error) {
	out := map[string]bool{}
	var algorithm string
	err := t.each(func(tok xml.Token) error {
		se, ok := tok.(xml.StartElement)
		if !ok {
			return nil
		}
		switch se.Name.Local {
		case "EncryptedData":
			algorithm = ""
		case "EncryptionMethod":
			if algorithm == "" {
				algorithm = strings.TrimSpace(attr(se, "Algorithm"))
			}
		case "CipherReference":
			if obfuscation[algorithm] || len(out) >= maxEntries {
				return nil
			}
			if name, ok := resolve("", attr(se, "URI")); ok {
				out[name] = true
			}
		}
		return nil
	})
	return out, err
}
