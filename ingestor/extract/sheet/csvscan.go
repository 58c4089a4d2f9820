package sheet

import (
	"strings"
	"unicode/utf8"
)

// scanCSV reads text's records as encoding/csv reads them with LazyQuotes
// and any number of fields a record (FuzzScanCSVMatchesEncodingCSV holds
// it to that), calling field with each field in order and end after each
// record. encoding/csv holds a whole record and its fields' positions
// before handing any of it over: a CSV that lost its line ends is one
// record, and a 10 MB one took 228 MB of heap; here a field is a piece of
// text itself unless it is quoted, and nothing else is kept.
func scanCSV(text string, comma rune, field func(v string) error, end func() error) error {
	commaLen := utf8.RuneLen(comma)
	var quoted []byte
	pos := 0
	for pos < len(text) {
		line, nl := csvLine(text, &pos)
		if line == "" {
			continue // an empty line is no record
		}
	fields:
		for {
			if line == "" || line[0] != '"' {
				i := strings.IndexRune(line, comma)
				if i < 0 {
					if err := field(line); err != nil {
						return err
					}
					break fields
				}
				if err := field(line[:i]); err != nil {
					return err
				}
				line = line[i+commaLen:]
				continue
			}
			line, quoted = line[1:], quoted[:0]
			for {
				i := strings.IndexByte(line, '"')
				if i < 0 {
					// The field goes on past its line, line break and all,
					// to the end of the text at most.
					quoted = append(quoted, line...)
					if !nl {
						if err := field(string(quoted)); err != nil {
							return err
						}
						break fields
					}
					quoted = append(quoted, '\n')
					line, nl = csvLine(text, &pos)
					continue
				}
				quoted, line = append(quoted, line[:i]...), line[i+1:]
				switch r, _ := utf8.DecodeRuneInString(line); {
				case line == "": // the record's end
					if err := field(string(quoted)); err != nil {
						return err
					}
					break fields
				case r == '"': // "" is a quote
					quoted, line = append(quoted, '"'), line[1:]
				case r == comma:
					if err := field(string(quoted)); err != nil {
						return err
					}
					line = line[commaLen:]
					continue fields
				default: // a bare quote, taken loosely
					quoted = append(quoted, '"')
				}
			}
		}
		if err := end(); err != nil {
			return err
		}
	}
	return nil
}

// csvLine is the line of text at *pos without its line break ("\r\n" or
// "\n"; a "\r" ending the text is dropped too), and whether it had one; it
// moves *pos past it.
func csvLine(text string, pos *int) (line string, nl bool) {
	rest := text[*pos:]
	i := strings.IndexByte(rest, '\n')
	if i < 0 {
		*pos = len(text)
		return strings.TrimSuffix(rest, "\r"), false
	}
	*pos += i + 1
	return strings.TrimSuffix(rest[:i], "\r"), true
}
