package pdf

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/strata-kb/strata/ingestor/extract"
)

// stdinPDF is how poppler's tools name their standard input as the PDF.
const stdinPDF = "fd://0"

// run runs a poppler tool (or the picture reader) under the time limit of
// ctx and the memory limit of lim, keeping at most maxOut bytes of its
// output. A tool given the PDF on stdin (pdf != nil, its file argument
// stdinPDF) gets its limit from the prlimit system call once started and
// only then the PDF, so nothing the file holds runs unbounded: no temporary
// file, no prlimit process. A tool that must open a file (pdftohtml) starts
// under the prlimit command.
func (p Poppler) run(ctx context.Context, lim extract.Limits, maxOut int, pdf []byte, tool string, args ...string) ([]byte, error) {
	path := p.tool(tool)
	limitAfterStart := pdf != nil && lim.MaxMemoryBytes > 0 && canLimitMemory
	goProgram := tool == p.PictureReader // limited by its data, not its address space (limitMemory)
	var cmd *exec.Cmd
	if prlimit, err := exec.LookPath("prlimit"); err == nil && lim.MaxMemoryBytes > 0 && !limitAfterStart {
		limit := "--as="
		if goProgram {
			limit = "--data="
		}
		cmd = exec.CommandContext(ctx, prlimit, append([]string{limit + strconv.FormatInt(lim.MaxMemoryBytes, 10), "--", path}, args...)...)
	} else {
		cmd = exec.CommandContext(ctx, path, args...)
	}
	cmd.WaitDelay = 2 * time.Second
	stdout := &capped{max: maxOut}
	stderr := &tail{max: 4096}
	cmd.Stdout, cmd.Stderr = struct{ io.Writer }{stdout}, stderr // hide bytes.Buffer.ReadFrom, which would bypass the cap
	var stdin io.WriteCloser
	if pdf != nil {
		var err error
		if stdin, err = cmd.StdinPipe(); err != nil {
			return nil, fmt.Errorf("%s: %w", tool, err)
		}
	}
	if err := cmd.Start(); err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("%w: %s before it started: %v", extract.ErrTimeout, tool, ctx.Err())
		}
		return nil, fmt.Errorf("%s: %w", tool, err)
	}
	if limitAfterStart {
		if err := limitMemory(cmd.Process.Pid, lim.MaxMemoryBytes, goProgram); err != nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
			return nil, fmt.Errorf("%s: limit its memory: %w", tool, err)
		}
	}
	if stdin != nil {
		// A tool that fails early stops reading: the write then fails, and
		// the tool's own exit status says why.
		go func() { _, _ = stdin.Write(pdf); _ = stdin.Close() }()
	}
	err := cmd.Wait()
	switch {
	case ctx.Err() != nil:
		return nil, fmt.Errorf("%w: %s after %v", extract.ErrTimeout, tool, ctx.Err())
	case stdout.over:
		return nil, fmt.Errorf("%w: %s output over %d bytes", extract.ErrTooLarge, tool, maxOut)
	case err != nil:
		return nil, fmt.Errorf("%s: %v: %s", tool, err, strings.TrimSpace(stderr.String()))
	}
	return stdout.Bytes(), nil
}

// capped is a buffer that stops growing at max bytes and remembers that it did.
type capped struct {
	bytes.Buffer
	max  int
	over bool
}

func (c *capped) Write(b []byte) (int, error) {
	if room := c.max - c.Len(); len(b) > room {
		c.over = true
		c.Buffer.Write(b[:max(room, 0)])
		return 0, errors.New("output limit reached")
	}
	return c.Buffer.Write(b)
}

// tail keeps the last max bytes written: a tool's last words say why it
// failed, after any number of warnings.
type tail struct {
	buf []byte
	max int
}

func (t *tail) Write(b []byte) (int, error) {
	t.buf = append(t.buf, b...)
	if len(t.buf) > 2*t.max {
		t.buf = append(t.buf[:0], t.buf[len(t.buf)-t.max:]...)
	}
	return len(b), nil
}

func (t *tail) String() string { return string(t.buf[max(0, len(t.buf)-t.max):]) }

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return s[i+1:]
	}
	return s
}
