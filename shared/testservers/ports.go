package testservers

import (
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
)

// Ports are picked below the kernel's ephemeral range. A port the kernel
// hands out for 127.0.0.1:0 lies inside that range, and so does the local
// end of every outgoing connection: in the seconds between picking a port
// and the server binding it, a client connection elsewhere in the test
// could take it ("bind: address already in use", seen in CI).
const (
	lowestPort         = 10000
	defaultEphemeralLo = 32768
)

var (
	portsMu sync.Mutex
	// handedOut keeps this process from picking a port twice before the
	// first caller's server has bound it.
	handedOut = map[int]bool{}
	// claims are the lock files of the ports this process was handed,
	// held open (and locked) until it exits (claimAcrossProcesses).
	claims []*os.File
)

// claimAcrossProcesses keeps other processes that pick ports here (the
// test packages `go test` runs at once, each starting servers) from
// picking p while this one may still start a server on it: an exclusive
// flock on <temp dir>/strata-ports/<p>, held until this process exits.
// Between one process's pick and its server's bind another process's
// test could bind the same port ("bind: address already in use" from a
// Weaviate node in CI, with every port picked below the ephemeral range).
// Where the directory cannot be made the claim is not made: the bind
// test alone decides, as before.
func claimAcrossProcesses(p int) bool {
	dir := filepath.Join(os.TempDir(), "strata-ports")
	if err := os.MkdirAll(dir, 0o777); err != nil {
		return true
	}
	f, err := os.OpenFile(filepath.Join(dir, strconv.Itoa(p)), os.O_CREATE|os.O_RDWR, 0o666)
	if err != nil {
		return true
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		return false
	}
	portsMu.Lock()
	claims = append(claims, f)
	portsMu.Unlock()
	return true
}

// FreePorts returns n distinct free loopback TCP ports.
func FreePorts(n int) ([]int, error) {
	var ls []net.Listener
	defer func() { closeAll(ls) }()
	ports := make([]int, 0, n)
	for range n {
		p, l, err := reservePort(func(int) bool { return true })
		if err != nil {
			return nil, err
		}
		ls = append(ls, l)
		ports = append(ports, p)
	}
	return ports, nil
}

// FreePortPairs picks n pairs of free consecutive loopback ports (p, p+1):
// Weaviate nodes sharing one host derive a peer's data and Raft RPC ports
// as its gossip and Raft ports plus one.
func FreePortPairs(n int) ([][2]int, error) {
	var ls []net.Listener
	defer func() { closeAll(ls) }()
	var pairs [][2]int
	for tries := 0; len(pairs) < n && tries < 200; tries++ {
		p, l, err := reservePort(func(p int) bool { return PortFree(p + 1) })
		if err != nil {
			return nil, err
		}
		ls = append(ls, l)
		next, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p+1))
		if err != nil {
			continue
		}
		if !claimAcrossProcesses(p + 1) {
			next.Close()
			continue
		}
		ls = append(ls, next)
		markHandedOut(p + 1)
		pairs = append(pairs, [2]int{p, p + 1})
	}
	if len(pairs) < n {
		return nil, fmt.Errorf("free port pairs: found %d of %d", len(pairs), n)
	}
	return pairs, nil
}

// reservePort finds a port outside the ephemeral range that no caller in
// this process was given, binds it (the caller closes the listener once
// all its ports are chosen) and records it.
func reservePort(extra func(int) bool) (int, net.Listener, error) {
	hi := ephemeralLow()
	if hi-lowestPort < 1000 {
		// An unusual kernel setting leaves no room below: fall back to
		// what the kernel picks.
		return kernelPort()
	}
	for range 2000 {
		p := lowestPort + rand.IntN(hi-lowestPort-1)
		portsMu.Lock()
		taken := handedOut[p]
		portsMu.Unlock()
		if taken || !extra(p) {
			continue
		}
		l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p))
		if err != nil {
			continue
		}
		if !claimAcrossProcesses(p) {
			l.Close()
			markHandedOut(p) // another process's: not ours to try again
			continue
		}
		markHandedOut(p)
		return p, l, nil
	}
	return 0, nil, fmt.Errorf("free port: no free loopback port in %d-%d", lowestPort, hi-1)
}

func kernelPort() (int, net.Listener, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, nil, fmt.Errorf("free port: %w", err)
	}
	p := l.Addr().(*net.TCPAddr).Port
	markHandedOut(p)
	return p, l, nil
}

func markHandedOut(p int) {
	portsMu.Lock()
	handedOut[p] = true
	portsMu.Unlock()
}

// ephemeralLow reads the first port of the kernel's ephemeral range.
func ephemeralLow() int {
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return defaultEphemeralLo
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return defaultEphemeralLo
	}
	lo, err := strconv.Atoi(f[0])
	if err != nil {
		return defaultEphemeralLo
	}
	return lo
}

func closeAll(ls []net.Listener) {
	for _, l := range ls {
		l.Close()
	}
}
