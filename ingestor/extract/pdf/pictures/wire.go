package pictures

import (
	"encoding/gob"
	"fmt"
	"io"
)

// ExitUnsupported is strata-pdf-pictures' exit status for ErrUnsupported.
const ExitUnsupported = 3

// Write writes pics for ReadFrom: the child process's answer.
func Write(w io.Writer, pics []Picture) error {
	return gob.NewEncoder(w).Encode(pics)
}

// ReadFrom reads what Write wrote.
func ReadFrom(r io.Reader) ([]Picture, error) {
	var pics []Picture
	if err := gob.NewDecoder(r).Decode(&pics); err != nil {
		return nil, fmt.Errorf("read pictures: %w", err)
	}
	return pics, nil
}
