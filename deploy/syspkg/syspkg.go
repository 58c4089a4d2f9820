// Package syspkg installs the system programs Strata runs as child processes
// (poppler's pdftotext and friends), from the distribution's packages.
package syspkg

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
)

// Requirement is a program and the Debian packages that provide it.
type Requirement struct {
	Program  string
	Packages []string
	Brew     string // the Homebrew formula, for the message on a Mac
}

// Poppler is what the PDF extractor needs (poppler-data for CJK text).
var Poppler = Requirement{Program: "pdftotext", Packages: []string{"poppler-utils", "poppler-data"}, Brew: "poppler"}

// Tesseract is what OCR of scans and pictures needs (English; other
// languages are the packages tesseract-ocr-<lang>).
var Tesseract = Requirement{Program: "tesseract", Packages: []string{"tesseract-ocr", "tesseract-ocr-eng"}, Brew: "tesseract"}

// Ensure installs r's packages with apt-get when its program is missing and
// this process may (root, apt-get present); otherwise it says what to install.
func Ensure(ctx context.Context, r Requirement, progress io.Writer) error {
	if _, err := exec.LookPath(r.Program); err == nil {
		return nil
	}
	manual := fmt.Errorf("%s is missing: install the packages %s (Debian/Ubuntu: sudo apt-get install -y %s; macOS: brew install %s)",
		r.Program, strings.Join(r.Packages, ", "), strings.Join(r.Packages, " "), r.Brew)
	apt, err := exec.LookPath("apt-get")
	if err != nil || os.Geteuid() != 0 {
		return manual
	}
	fmt.Fprintf(progress, "installing %s with apt-get\n", strings.Join(r.Packages, " "))
	for _, args := range [][]string{{"update", "-qq"}, append([]string{"install", "-y", "-qq", "--no-install-recommends"}, r.Packages...)} {
		cmd := exec.CommandContext(ctx, apt, args...)
		cmd.Env = append(os.Environ(), "DEBIAN_FRONTEND=noninteractive")
		cmd.Stdout, cmd.Stderr = progress, progress
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("apt-get %s: %w; %v", args[0], err, manual)
		}
	}
	if _, err := exec.LookPath(r.Program); err != nil {
		return manual
	}
	return nil
}
