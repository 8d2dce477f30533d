package web

import (
	"bytes"
	"testing"
)

// isClosed reports whether ch is closed (without waiting).
func isClosed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// takeAll takes and acknowledges every message, returning them in order.
func takeAll(m *mailbox) []string {
	var out []string
	for b := m.take(); b != nil; b = m.take() {
		out = append(out, string(b))
		m.wrote()
	}
	return out
}

func TestMailboxOrderAndNewestWins(t *testing.T) {
	m := newMailbox(nil)
	if m.putFrame([]byte("f1")) {
		t.Error("the first frame replaced one")
	}
	if !m.putFrame([]byte("f2")) {
		t.Error("the second frame did not replace the first")
	}
	m.putInfo([]byte("i1"))
	m.putInfo([]byte("i2"))
	m.putMsg([]byte("q1"), false)
	m.putMsg([]byte("q2"), false)
	if !m.pending() {
		t.Error("pending false with a frame waiting")
	}
	got := takeAll(m)
	want := []string{"q1", "q2", "i2", "f2"}
	if len(got) != len(want) {
		t.Fatalf("took %q, want %q", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("took %q, want %q", got, want)
		}
	}
	if m.pending() {
		t.Error("pending true after the frame was taken")
	}
}

func TestMailboxHelloDropsFrame(t *testing.T) {
	m := newMailbox(nil)
	m.putFrame([]byte("old-run-frame"))
	m.putMsg([]byte("hello"), true)
	if got := takeAll(m); len(got) != 1 || got[0] != "hello" {
		t.Fatalf("took %q, want only the hello", got)
	}
}

func TestMailboxFullQueueKicks(t *testing.T) {
	m := newMailbox(nil)
	big := bytes.Repeat([]byte("x"), maxQueued/2+1)
	if !m.putMsg(big, false) {
		t.Fatal("the first message was refused")
	}
	if isClosed(m.kicked) {
		t.Fatal("kicked before the queue was full")
	}
	if m.putMsg(big, false) {
		t.Fatal("a message past maxQueued was queued")
	}
	if !isClosed(m.kicked) {
		t.Fatal("a full queue did not kick the client")
	}
	// A kicked client is being closed: nothing more is queued, and a second refusal does not
	// panic (the kick happens once).
	if m.putMsg([]byte("y"), false) {
		t.Fatal("queued after a kick")
	}
	// What the writer still has is what was queued before the kick, and only that.
	if got := takeAll(m); len(got) != 1 || got[0] != string(big) {
		t.Fatalf("after the kick the writer takes %d messages, want the first one alone", len(got))
	}
}

// TestMailboxQueueCountsHeldBytes: the bound is on bytes held, so a client that reads keeps going.
func TestMailboxQueueCountsHeldBytes(t *testing.T) {
	m := newMailbox(nil)
	big := bytes.Repeat([]byte("x"), maxQueued/2+1)
	for i := range 5 {
		if !m.putMsg(big, false) {
			t.Fatalf("message %d refused with the queue drained", i)
		}
		m.take()
		m.wrote()
	}
	if isClosed(m.kicked) {
		t.Fatal("a reading client was kicked")
	}
}

func TestMailboxBudget(t *testing.T) {
	b := &budget{limit: 100}
	m := newMailbox(b)
	// The first message of an empty queue is always taken, charged even past the limit.
	if !m.putMsg(make([]byte, 150), false) {
		t.Fatal("the first message was refused")
	}
	if got := b.inUse(); got != 150 {
		t.Fatalf("charged %d, want 150", got)
	}
	if m.putMsg(make([]byte, 10), false) || !isClosed(m.kicked) {
		t.Fatal("a message past the budget was queued, or did not kick")
	}
	// Held while being written, given back once written.
	m.take()
	if got := b.inUse(); got != 150 {
		t.Fatalf("charged %d while writing, want 150", got)
	}
	m.wrote()
	if got := b.inUse(); got != 0 {
		t.Fatalf("charged %d after the write, want 0", got)
	}
	// Frames and room messages are shared bytes, not charged.
	m.putFrame(make([]byte, 1000))
	m.putInfo(make([]byte, 1000))
	if got := b.inUse(); got != 0 {
		t.Fatalf("frames charged %d", got)
	}
	// close gives back whatever is left, a message being written included.
	m2 := newMailbox(b)
	m2.putMsg(make([]byte, 40), false)
	m2.putMsg(make([]byte, 30), false)
	m2.take()
	m2.close()
	if got := b.inUse(); got != 0 {
		t.Fatalf("charged %d after close, want 0", got)
	}
	m2.wrote() // the writer finishing after close gives nothing back twice
	if got := b.inUse(); got != 0 {
		t.Fatalf("charged %d after a write that ended after close", got)
	}
	if m2.putMsg([]byte("late"), false) {
		t.Fatal("a closed mailbox queued a message")
	}
}

func TestMailboxDrained(t *testing.T) {
	m := newMailbox(nil)
	if !isClosed(m.drained()) {
		t.Fatal("an empty mailbox is not drained")
	}
	m.putMsg([]byte("bye"), false)
	m.putFrame([]byte("f"))
	d := m.drained()
	m.take()
	if isClosed(d) {
		t.Fatal("drained with a frame left")
	}
	m.wrote()
	m.take()
	if isClosed(d) {
		t.Fatal("drained while the last message is being written")
	}
	m.wrote()
	if !isClosed(d) {
		t.Fatal("not drained after the last write")
	}
	// close releases waiters too.
	m.putMsg([]byte("x"), false)
	d = m.drained()
	m.close()
	if !isClosed(d) {
		t.Fatal("close left a waiter")
	}
}
