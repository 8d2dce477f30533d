package web

import "sync"

// mailbox hands messages from the run loop to the writer. A frame not yet
// written is replaced by a newer one (newest wins), so a slow client costs
// the server nothing; hello and error messages are queued and never
// replaced: one per connect or mode switch, one per answered control (a page of the initial map, a
// quiz answer, an error). A client that asks faster than it reads would grow the queue, so it is
// bounded in bytes: past maxQueued the client is too slow and is dropped.
type mailbox struct {
	mu     sync.Mutex
	queue  [][]byte
	queued int // bytes in queue
	frame  []byte
	ready  chan struct{} // capacity 1: "something to send"
	// writing is set from take to wrote: a message is on its way out.
	writing bool
}

// maxQueued bounds the bytes of queued (never replaced) messages of one connection.
const maxQueued = 8 << 20

func newMailbox() *mailbox { return &mailbox{ready: make(chan struct{}, 1)} }

// putMsg queues a message that is never replaced. With dropFrame (a new
// hello) an unsent frame, which belongs to the previous outline, is dropped.
// It reports false, queueing nothing, when the queue is full.
func (m *mailbox) putMsg(b []byte, dropFrame bool) bool {
	m.mu.Lock()
	if m.queued+len(b) > maxQueued && len(m.queue) > 0 {
		m.mu.Unlock()
		return false
	}
	m.queue = append(m.queue, b)
	m.queued += len(b)
	if dropFrame {
		m.frame = nil
	}
	m.mu.Unlock()
	m.signal()
	return true
}

// putFrame stores b as the next frame and reports whether it replaced an
// unsent one (whose events are then lost to the client).
func (m *mailbox) putFrame(b []byte) (replaced bool) {
	m.mu.Lock()
	replaced = m.frame != nil
	m.frame = b
	m.mu.Unlock()
	m.signal()
	return replaced
}

// pending reports whether a frame is waiting to be written.
func (m *mailbox) pending() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.frame != nil
}

func (m *mailbox) signal() {
	select {
	case m.ready <- struct{}{}:
	default:
	}
}

// take returns the next message to write, queued messages first, or nil.
func (m *mailbox) take() []byte {
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.queue) > 0 {
		b := m.queue[0]
		m.queue[0] = nil
		m.queue = m.queue[1:]
		m.queued -= len(b)
		m.writing = true
		if len(m.queue) > 0 || m.frame != nil {
			m.signalLocked()
		}
		return b
	}
	b := m.frame
	m.frame = nil
	m.writing = b != nil
	return b
}

// wrote says the message take returned has been written (or failed).
func (m *mailbox) wrote() {
	m.mu.Lock()
	m.writing = false
	m.mu.Unlock()
}

func (m *mailbox) signalLocked() {
	select {
	case m.ready <- struct{}{}:
	default:
	}
}
