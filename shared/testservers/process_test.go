package testservers

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestStartNice: a process started with Nice runs at that priority, under
// its own pid (nice execs it), and one without at the caller's.
func TestStartNice(t *testing.T) {
	if _, err := exec.LookPath("nice"); err != nil {
		t.Skip("no nice command on this machine: Nice is not applied without it")
	}
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		t.Skip("no sleep command")
	}
	niceOf := func(pid int) int {
		t.Helper()
		// /proc/<pid>/stat: after the command's ")", field 19 of proc(5) is nice (index 16 here).
		var b []byte
		for range 100 { // until nice has exec'd the program
			b, err = os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(string(b), "(sleep)") {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
		f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
		n, err := strconv.Atoi(f[16])
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	own := niceOf(os.Getpid())
	for _, nice := range []int{0, 10} {
		p, err := Start(Spec{Name: "sleep", Path: sleep, Args: []string{"30"}, LogFile: filepath.Join(t.TempDir(), "sleep.log"), Nice: nice})
		if err != nil {
			t.Fatal(err)
		}
		got := niceOf(p.Pid())
		p.Stop(time.Second)
		if want := min(own+nice, 19); got != want {
			t.Errorf("Nice %d: the process runs at nice %d, want %d", nice, got, want)
		}
	}
}
