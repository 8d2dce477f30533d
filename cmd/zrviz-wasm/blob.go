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
	// blobCacheChunks bounds the cache all local images share: 256 chunks, 64 MiB, beside the
	// 192 MiB an image expanded in memory may take, in a worker that should stay within 256 MB.
	blobCacheChunks = 256
)

// blobReaderAt reads a JavaScript Blob (a File the user picked) as an io.ReaderAt, through
// Blob.slice(off, end).arrayBuffer(): the file is read where it lies, a piece at a time, and never
// whole. Small reads go through a chunkCache of blobChunk-aligned chunks; a read of a chunk or more
// (an expansion streaming a compressed image) is fetched as it is and not cached, so a stream read
// once does not evict the chunks the reader keeps coming back to.
//
// ReadAt blocks until the Promise settles, so it must run on a goroutine of its own, never in a
// js.Func callback: the callback would hold the event loop the Promise needs.
type blobReaderAt struct {
	blob  js.Value
	size  int64
	cache *chunkCache

	mu      sync.Mutex
	fetches int // JavaScript round trips made (tests count them)
}

// chunkCache is an LRU of file chunks shared by every blobReaderAt of one worker, so that the
// memory it takes is bounded once, however many images are open.
type chunkCache struct {
	mu    sync.Mutex
	lru   *list.List                 // of *chunkEntry, most recent first
	index map[chunkKey]*list.Element // the elements of lru by key
	max   int                        // chunks kept
}

type chunkKey struct {
	r *blobReaderAt
	n int64 // chunk number: bytes [n×blobChunk, (n+1)×blobChunk)
}

type chunkEntry struct {
	key  chunkKey
	data []byte
}

// newChunkCache keeps at most maxChunks chunks.
func newChunkCache(maxChunks int) *chunkCache {
	return &chunkCache{lru: list.New(), index: map[chunkKey]*list.Element{}, max: maxChunks}
}

func (c *chunkCache) get(k chunkKey) ([]byte, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.index[k]
	if !ok {
		return nil, false
	}
	c.lru.MoveToFront(e)
	return e.Value.(*chunkEntry).data, true
}

// put keeps data under k unless another goroutine did meanwhile, and returns what is kept.
func (c *chunkCache) put(k chunkKey, data []byte) []byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.index[k]; ok {
		c.lru.MoveToFront(e)
		return e.Value.(*chunkEntry).data
	}
	c.index[k] = c.lru.PushFront(&chunkEntry{key: k, data: data})
	for c.lru.Len() > c.max {
		last := c.lru.Back()
		delete(c.index, last.Value.(*chunkEntry).key)
		c.lru.Remove(last)
	}
	return data
}

// len is the number of chunks kept.
func (c *chunkCache) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lru.Len()
}

// newBlobReaderAt reads blob, of size bytes, caching small reads' chunks in cache.
func newBlobReaderAt(blob js.Value, size int64, cache *chunkCache) *blobReaderAt {
	return &blobReaderAt{blob: blob, size: size, cache: cache}
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

// chunk returns chunk number n, from the cache or fetched.
func (b *blobReaderAt) chunk(n int64) ([]byte, error) {
	k := chunkKey{r: b, n: n}
	if d, ok := b.cache.get(k); ok {
		return d, nil
	}
	start := n * blobChunk
	data := make([]byte, min(blobChunk, b.size-start))
	if _, err := b.fetch(data, start); err != nil {
		return nil, err
	}
	return b.cache.put(k, data), nil
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
