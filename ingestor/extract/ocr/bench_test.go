//go:build unix

package ocr

import (
	"bytes"
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// benchPages is how many page pictures BenchmarkOCR reads each way.
const benchPages = 20

// pages makes n different A4 pages at 300 dpi, gray, of the text in
// testdata/page.png laid out four times, shifted a little per page.
func pages(b *testing.B, n int) [][]byte {
	b.Helper()
	f, err := os.Open("testdata/page.png")
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	text, err := png.Decode(f)
	if err != nil {
		b.Fatal(err)
	}
	var out [][]byte
	for i := range n {
		page := image.NewGray(image.Rect(0, 0, 2480, 3508))
		draw.Draw(page, page.Bounds(), image.NewUniform(color.White), image.Point{}, draw.Src)
		for k := range 4 {
			at := image.Pt(300+7*i, 200+k*(text.Bounds().Dy()+5*i/2))
			draw.Draw(page, text.Bounds().Add(at), text, image.Point{}, draw.Src)
		}
		var buf bytes.Buffer
		if err := png.Encode(&buf, page); err != nil {
			b.Fatal(err)
		}
		out = append(out, buf.Bytes())
	}
	return out
}

// BenchmarkOCR reads benchPages pages with Tesseract.Recognize (the
// picture on stdin, the TSV parsed) and with bare tesseract on a file
// (`tesseract page.png stdout -l eng --psm 3 tsv`, its output only
// collected), both with OMP_THREAD_LIMIT=1, page by page in turns so that
// load on the machine falls on both alike. It reports each one's pages a
// second and their ratio (goal: >= 0.9), and the ratio of the CPU time
// each took (Tesseract's and this process's), which load from other work
// on the machine does not blur as it does the wall time.
func BenchmarkOCR(b *testing.B) {
	tess, err := New(Config{})
	if err != nil {
		b.Fatal(err)
	}
	imgs := pages(b, benchPages)
	dir := b.TempDir()
	var files []string
	for i, img := range imgs {
		files = append(files, filepath.Join(dir, "page"+string(rune('a'+i))+".png"))
		if err := os.WriteFile(files[i], img, 0o600); err != nil {
			b.Fatal(err)
		}
	}
	env := append(os.Environ(), "OMP_THREAD_LIMIT=1")
	var ours, bare, oursCPU, bareCPU time.Duration
	var paragraphs int
	ourRun := func(i int) {
		start, cpu0 := time.Now(), cpuTime(b)
		blocks, err := tess.Recognize(b.Context(), imgs[i])
		ours += time.Since(start)
		oursCPU += cpuTime(b) - cpu0
		if err != nil || len(blocks) == 0 {
			b.Fatalf("page %d: %d blocks, %v", i, len(blocks), err)
		}
		paragraphs += len(blocks)
	}
	bareRun := func(i int) {
		cmd := exec.Command(tess.bin, files[i], "stdout", "-l", "eng", "--psm", "3", "tsv")
		cmd.Env = env
		var out bytes.Buffer
		cmd.Stdout = &out
		start, cpu0 := time.Now(), cpuTime(b)
		err := cmd.Run()
		bare += time.Since(start)
		bareCPU += cpuTime(b) - cpu0
		if err != nil || out.Len() == 0 {
			b.Fatalf("bare tesseract, page %d: %v", i, err)
		}
	}
	for b.Loop() {
		for i := range imgs {
			if i%2 == 0 {
				ourRun(i)
				bareRun(i)
			} else {
				bareRun(i)
				ourRun(i)
			}
		}
	}
	n := float64(b.N * len(imgs))
	b.ReportMetric(n/ours.Seconds(), "strata-pages/s")
	b.ReportMetric(n/bare.Seconds(), "bare-pages/s")
	b.ReportMetric(bare.Seconds()/ours.Seconds(), "ratio")
	b.ReportMetric(bareCPU.Seconds()/oursCPU.Seconds(), "cpu-ratio")
	b.ReportMetric(float64(paragraphs)/n, "paragraphs/page")
}

// cpuTime is the CPU time this process and its finished children took.
func cpuTime(b *testing.B) time.Duration {
	var total time.Duration
	for _, who := range []int{syscall.RUSAGE_SELF, syscall.RUSAGE_CHILDREN} {
		var ru syscall.Rusage
		if err := syscall.Getrusage(who, &ru); err != nil {
			b.Fatal(err)
		}
		total += time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	return total
}
