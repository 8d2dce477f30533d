package web

import "sync"

// mailbox hands messages from the goroutine that makes them (a player session, a room) to a
// connection's writer. It holds three kinds:
//
//   - queued messages (a hello, a page of the initial map, a quiz verdict, an error): never
//     replaced, written in order, bounded in bytes. A put that finds the queue full kicks the
//     client (kicked is closed, and the connection's loop closes it with a policy violation, as
//     coder/websocket's chat example closes a slow subscriber): a client that asks faster than it
//     reads must not grow the server.
//   - the room message (follower counts, the presenter's UI): newest wins.
//   - the frame: newest wins, so a slow client costs the server nothing.
//
// The bytes of queued messages are charged to the server's memory budget while they are held (a
// message being written included) and given back when written or when the mailbox is closed.
type mailbox struct {
	mu      sync.Mutex
	queue   [][]byte
	queued  int    // bytes in queue
	info    []byte // the newest room message not yet taken
	frame   []byte // the newest frame not yet taken
	writing int    // bytes of the message being written (-1 for a frame or room message); 0: none
	charged int64  // bytes charged to budget: queued plus a queued message being written
	budget  *budget
	closed  bool
	slow    bool          // kicked: nothing more is queued
	ready   chan struct{} // capacity 1: "something to send"
	kicked  chan struct{} // closed when a put found the queue full
	kick    sync.Once
	waiters []chan struct{} // closed when nothing is left to write
}

// maxQueued bounds the bytes of queued (never replaced) messages of one connection.
const maxQueued = 8 << 20

// newMailbox makes a mailbox that charges its queue to b (nil: to nothing).
func newMailbox(b *budget) *mailbox {
	return &mailbox{ready: make(chan struct{}, 1), kicked: make(chan struct{}), budget: b}
}

// putMsg queues a message that is never replaced. With dropFrame (a new hello) an unsent frame,
// which belongs to the previous outline, is dropped. It reports false, queueing nothing, when the
// queue is full (past maxQueued, or the budget spent); the client is then kicked. The first message
// of an empty queue is always taken (charged even past the budget): whoever made it reserved the
// work that made it.
func (m *mailbox) putMsg(b []byte, dropFrame bool) bool {
	m.mu.Lock()
	if m.closed || m.slow {
		m.mu.Unlock()
		return false
	}
	empty := len(m.queue) == 0
	if !empty && m.queued+len(b) > maxQueued || !m.budget.take(int64(len(b)), empty) {
		m.slow = true
		m.mu.Unlock()
		m.kickClient()
		return false
	}
	m.charged += int64(len(b))
	m.queue = append(m.queue, b)
	m.queued += len(b)
	if dropFrame {
		m.frame = nil
	}
	m.mu.Unlock()
	m.signal()
	return true
}

// kickClient marks the client too slow: the connection's loop closes it.
func (m *mailbox) kickClient() { m.kick.Do(func() { close(m.kicked) }) }

// putInfo stores b as the next room message, replacing one not yet taken.
func (m *mailbox) putInfo(b []byte) {
	m.mu.Lock()
	if !m.closed {
		m.info = b
	}
	m.mu.Unlock()
	m.signal()
}

// putFrame stores b as the next frame and reports whether it replaced an unsent one (whose events
// are then lost to the client).
func (m *mailbox) putFrame(b []byte) (replaced bool) {
	m.mu.Lock()
	replaced = m.frame != nil
	if !m.closed {
		m.frame = b
	}
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

// take returns the next message to write, queued messages first, then the room message, then the
// frame; nil when there is none. The caller calls wrote once it is written (or failed).
func (m *mailbox) take() []byte {
	m.mu.Lock()
	defer m.mu.Unlock()
	var b []byte
	switch {
	case len(m.queue) > 0:
		b = m.queue[0]
		m.queue[0] = nil
		m.queue = m.queue[1:]
		m.queued -= len(b)
		m.writing = len(b)
	case m.info != nil:
		b, m.info, m.writing = m.info, nil, -1
	case m.frame != nil:
		b, m.frame, m.writing = m.frame, nil, -1
	default:
		m.wakeLocked()
		return nil
	}
	if len(m.queue) > 0 || m.info != nil || m.frame != nil {
		m.signal()
	}
	return b
}

// wrote says the message take returned has been written (or failed): a queued message's bytes go
// back to the budget.
func (m *mailbox) wrote() {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.writing > 0 && !m.closed {
		m.charged -= int64(m.writing)
		m.budget.give(int64(m.writing))
	}
	m.writing = 0
	m.wakeLocked()
}

// drained returns a channel closed once everything put so far has been written (or the mailbox is
// closed).
func (m *mailbox) drained() <-chan struct{} {
	m.mu.Lock()
	defer m.mu.Unlock()
	ch := make(chan struct{})
	m.waiters = append(m.waiters, ch)
	m.wakeLocked()
	return ch
}

// wakeLocked closes the drained channels when nothing is left to write.
func (m *mailbox) wakeLocked() {
	if !m.closed && (len(m.queue) > 0 || m.info != nil || m.frame != nil || m.writing != 0) {
		return
	}
	for _, ch := range m.waiters {
		close(ch)
	}
	m.waiters = nil
}

// close drops what is left unsent and gives its bytes back to the budget; later puts are refused.
func (m *mailbox) close() {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return
	}
	m.closed = true
	m.budget.give(m.charged)
	m.charged = 0
	m.queue, m.queued, m.info, m.frame = nil, 0, nil, nil
	m.wakeLocked()
}
