package web

import (
	"net"
	"sync"
)

// DefaultMaxConns bounds the connections served at once when Config.MaxConns is 0 (and half the
// process's descriptor limit is more).
const DefaultMaxConns = 4096

// maxConns is the connection bound for cfg: Config.MaxConns, else DefaultMaxConns but at most half
// the descriptor limit, so that images, uploads and the listener always have descriptors left.
func maxConns(n int) int {
	if n != 0 {
		return n
	}
	n = DefaultMaxConns
	if l := openFilesLimit(); l > 0 && l/2 < n {
		n = max(l/2, 64)
	}
	return n
}

// limitListener accepts at most n connections at a time. Past that it stops calling Accept: new
// connections wait in the kernel's backlog and cost the process no descriptor until one closes.
// (A refused request still holds its connection for net/http's 500 ms reset-avoidance delay after
// the answer, so a flood of refused uploads alone could otherwise hold thousands.)
type limitListener struct {
	net.Listener
	sem       chan struct{}
	done      chan struct{} // closed by Close: an Accept waiting for a slot returns
	closeOnce sync.Once
}

func newLimitListener(l net.Listener, n int) net.Listener {
	if n <= 0 {
		return l
	}
	return &limitListener{Listener: l, sem: make(chan struct{}, n), done: make(chan struct{})}
}

func (l *limitListener) Accept() (net.Conn, error) {
	select {
	case l.sem <- struct{}{}:
	case <-l.done:
		return nil, net.ErrClosed
	}
	c, err := l.Listener.Accept()
	if err != nil {
		<-l.sem
		return nil, err
	}
	return &limitConn{Conn: c, release: func() { <-l.sem }}, nil
}

// Close closes the listener and ends an Accept waiting for a slot.
func (l *limitListener) Close() error {
	l.closeOnce.Do(func() { close(l.done) })
	return l.Listener.Close()
}

// limitConn gives its slot back when closed (by net/http, or by the websocket after a hijack).
type limitConn struct {
	net.Conn
	once    sync.Once
	release func()
}

func (c *limitConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.release)
	return err
}

// CloseWrite half-closes a TCP connection: net/http sends its last answer that way before closing
// (without it a client still sending could lose the answer to a reset).
func (c *limitConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}
