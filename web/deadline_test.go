package web

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"syscall"
	"testing"
	"time"
)

// TestWriteDeadlineEndsReservation: a client that sends a request and reads nothing of a large
// answer does not hold the handler, or what it reserved from the budget, past the write deadline
// every routed answer gets (Server.writeDeadline).
func TestWriteDeadlineEndsReservation(t *testing.T) {
	t.Parallel()
	s := mustOpenServer(t, Config{}).Server
	s.requestTimeoutFor = 300 * time.Millisecond
	ended := make(chan error, 1)
	hts := httptest.NewServer(s.writeDeadline(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		release, err := s.budget.reserve(100 << 20)
		if err != nil {
			ended <- err
			return
		}
		defer release()
		chunk := make([]byte, 64<<10)
		for range 4096 { // 256 MiB: far past any socket buffer
			if _, err := w.Write(chunk); err != nil {
				ended <- err
				return
			}
		}
		ended <- nil
	})))
	defer hts.Close()
	d := net.Dialer{Control: func(network, address string, c syscall.RawConn) error {
		return c.Control(func(fd uintptr) { syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096) })
	}}
	c, err := d.Dial("tcp", hts.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "GET / HTTP/1.1\r\nHost: %s\r\n\r\n", hts.Listener.Addr())
	// Read the status line only.
	if res, err := http.ReadResponse(bufio.NewReaderSize(c, 512), nil); err != nil || res.StatusCode != 200 {
		t.Fatalf("%v %v", res, err)
	}
	if err := <-ended; err == nil {
		t.Fatal("the handler wrote 256 MiB to a client that read nothing")
	}
	if u := s.budget.inUse(); u != 0 {
		t.Fatalf("%d bytes still reserved after the handler ended", u)
	}
}
