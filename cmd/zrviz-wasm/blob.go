//go:build js && wasm

package main

import (
	"container/list"
	"errors"
	"fmt"
	"io"
	"sync"
	"syscall/js"
)

const (
	// blobChunk is the unit a small read fetches and the cache keeps: imgio reads 4 KiB blocks and
	// 3 KiB superblocks, often neighbours (a NAT block, then the next; a dnode, then its data), and
	// one Blob.slice().arrayBuffer() round trip costs far more than copying 256 KiB.
	blobChunk = 256 << 10
	// blobCacheChunks bounds the cache: 256 chunks, 64 MiB, beside the 192 MiB an image expanded in
	// memory may take, in a worker that should stay within 256 MB with the cache mostly idle.
	blobCacheChunks = 256
)

// blobReaderAt reads a JavaScript Blob (a File the user picked) as an io.ReaderAt, through
// Blob.slice(off, end).arrayBuffer(): the file is read where it lies, a piece at a time, and never
// whole. Small reads go through an LRU cache of blobChunk-aligned chunks; a read of a chunk or more
// (an expansion streaming a compressed image) is fetched as it is and not cached, so a stream read
// once does not evict the chunks the reader keeps coming back to.
//
// ReadAt blocks until the Promise settles, so it must run on a goroutine of its own, never in a
// js.Func callback: the callback would hold the event loop the Promise needs.
type blobReaderAt struct {
	blob js.Value
	size int64

	mu    sync.Mutex
	lru   *list.List              // of *blobChunkEntry, most recent first
	index map[int64]*list.Element // chunk number → element of lru
	max   int                     // chunks kept

	fetches int // JavaScript round trips made (tests count them)
}

type blobChunkEntry struct {
	n    int64
	data []byte
}

// newBlobReaderAt reads blob, of size bytes, caching at most maxChunks chunks.
func newBlobReaderAt(blob js.Value, size int64, maxChunks int) *blobReaderAt {
	return &blobReaderAt{blob: blob, size: size, lru: list.New(), index: map[int64]*list.Element{}, max: maxChunks}
}

// ReadAt reads len(p) bytes at off, or what is left before the end with io.EOF.
func (b *blobReaderAt) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, fmt.Errorf("blob: read at negative offset %d", off)
	}
	if off >= b.size {
		if len(p) == 0 {
			return 0, nil
		}
		return 0, io.EOF
	}
	want := min(int64(len(p)), b.size-off)
	if want >= blobChunk {
		n, err := b.fetch(p[:want], off)
		if err == nil && int64(n) < int64(len(p)) {
			err = io.EOF
		}
		return n, err
	}
	n := 0
	for int64(n) < want {
		at := off + int64(n)
		c, err := b.chunk(at / blobChunk)
		if err != nil {
			return n, err
		}
		in := at - (at/blobChunk)*blobChunk
		n += copy(p[n:want], c[in:])
	}
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// chunk returns chunk number c, from the cache or fetched.
func (b *blobReaderAt) chunk(c int64) ([]byte, error) {
	b.mu.Lock()
	if e, ok := b.index[c]; ok {
		b.lru.MoveToFront(e)
		d := e.Value.(*blobChunkEntry).data
		b.mu.Unlock()
		return d, nil
	}
	b.mu.Unlock()
	start := c * blobChunk
	data := make([]byte, min(blobChunk, b.size-start))
	if _, err := b.fetch(data, start); err != nil {
		return nil, err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if e, ok := b.index[c]; ok { // another goroutine fetched it meanwhile
		b.lru.MoveToFront(e)
		return e.Value.(*blobChunkEntry).data, nil
	}
	b.index[c] = b.lru.PushFront(&blobChunkEntry{n: c, data: data})
	for b.lru.Len() > b.max {
		last := b.lru.Back()
		delete(b.index, last.Value.(*blobChunkEntry).n)
		b.lru.Remove(last)
	}
	return data, nil
}

// fetch reads p at off (inside the blob) with one Blob.slice().arrayBuffer() round trip.
func (b *blobReaderAt) fetch(p []byte, off int64) (int, error) {
	b.mu.Lock()
	b.fetches++
	b.mu.Unlock()
	v, err := await(b.blob.Call("slice", off, off+int64(len(p))).Call("arrayBuffer"))
	if err != nil {
		return 0, fmt.Errorf("blob: reading %d bytes at offset %d: %w", len(p), off, err)
	}
	n := js.CopyBytesToGo(p, js.Global().Get("Uint8Array").New(v))
	if n < len(p) {
		return n, fmt.Errorf("blob: reading %d bytes at offset %d: got %d (did the file change?): %w", len(p), off, n, io.ErrUnexpectedEOF)
	}
	return n, nil
}

// await waits for a Promise and returns what it resolved to, or its rejection as an error. It
// blocks the calling goroutine, which must not be the one running a js.Func callback.
func await(promise js.Value) (js.Value, error) {
	type result struct {
		v   js.Value
		err error
	}
	ch := make(chan result, 1)
	then := js.FuncOf(func(_ js.Value, args []js.Value) any {
		ch <- result{v: args[0]}
		return nil
	})
	catch := js.FuncOf(func(_ js.Value, args []js.Value) any {
		ch <- result{err: jsError(args[0])}
		return nil
	})
	defer then.Release()
	defer catch.Release()
	promise.Call("then", then, catch)
	r := <-ch
	return r.v, r.err
}

// jsError turns a rejection reason (an Error, or anything) into a Go error.
func jsError(v js.Value) error {
	if v.Type() == js.TypeObject && v.Get("message").Type() == js.TypeString {
		return errors.New(v.Get("message").String())
	}
	return errors.New(js.Global().Get("String").Invoke(v).String())
}
