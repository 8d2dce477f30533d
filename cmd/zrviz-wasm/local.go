//go:build js && wasm

package main

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"syscall/js"

	"github.com/zrviz/zrviz/imgio"
	"github.com/zrviz/zrviz/internal/units"
	"github.com/zrviz/zrviz/web"
)

// maxUnpacked bounds the memory all compressed images opened in one worker hold (their non-zero
// blocks: a gzip, xz or zstd image cannot be read in place). Images read in place cost their share
// of the chunk cache only. With the demo's 86 MiB and the Go heap this keeps the worker near 512 MB
// at worst; opening past it is refused, saying so, rather than growing without bound.
const maxUnpacked int64 = 320 << 20

// unpacked counts the memory the worker's compressed images hold.
type unpacked struct {
	mu   sync.Mutex
	held int64
}

// reserve takes the bound for the next image from what is left (two opens at once cannot both have
// all of it), or returns an error when nothing is left; settle gives back what the image did not use.
func (u *unpacked) reserve() (int64, error) {
	u.mu.Lock()
	defer u.mu.Unlock()
	left := maxUnpacked - u.held
	if left < 4<<20 {
		return 0, fmt.Errorf("zrviz: the compressed images opened in this browser already hold %s of memory, "+
			"the bound of the static site: open a raw or Android sparse image (read in place), or close every zrviz tab "+
			"to let the worker go", units.Bytes(u.held))
	}
	r := min(left, imgio.DefaultMaxMemory)
	u.held += r
	return r, nil
}

// settle replaces a reservation by what the image holds (0 when it was not opened).
func (u *unpacked) settle(reserved, used int64) {
	u.mu.Lock()
	u.held += used - reserved
	u.mu.Unlock()
}

// registerLocal sets zrviz.openLocal(file): the service worker calls it with the File a page sent
// (static/site/sw.js, message type 'zrviz-open'). It returns a Promise resolving to {id, name} once
// the image is open in srv, or rejecting with an Error whose message says what is wrong and where
// (imgio's errors name the structure and the byte offset). The file is read through Blob.slice,
// lazily for raw and Android sparse images, and never leaves the browser.
func registerLocal(srv *web.Server, zrviz js.Value) {
	cache := newChunkCache(blobCacheChunks)
	mem := &unpacked{}
	// The js.Func lives as long as the worker: it is never released.
	zrviz.Set("openLocal", js.FuncOf(func(_ js.Value, args []js.Value) any {
		var file js.Value
		if len(args) > 0 {
			file = args[0]
		}
		return newPromise(func() (any, error) {
			id, name, err := openLocal(context.Background(), srv, cache, mem, file)
			if err != nil {
				return nil, err
			}
			return map[string]any{"id": id, "name": name}, nil
		})
	}))
}

// openLocal opens file (a Blob or File) in srv, or finds it there already, and returns its id and
// name. Its small reads are cached in cache.
func openLocal(ctx context.Context, srv *web.Server, cache *chunkCache, mem *unpacked, file js.Value) (id, name string, err error) {
	if file.Type() != js.TypeObject || file.Get("slice").Type() != js.TypeFunction || file.Get("size").Type() != js.TypeNumber {
		return "", "", errors.New("zrviz: openLocal needs a File (or Blob) to read")
	}
	name = "local image"
	if n := file.Get("name"); n.Type() == js.TypeString && n.String() != "" {
		name = n.String()
	}
	size := int64(file.Get("size").Float())
	r := newBlobReaderAt(file, size, cache)
	fp, err := imgio.Fingerprint(r, size)
	if err != nil {
		return "", "", err
	}
	id = web.LocalImageID(fp)
	if known, ok := srv.LocalImage(id); ok {
		return id, known, nil
	}
	room, err := mem.reserve()
	if err != nil {
		return "", "", err
	}
	img, err := imgio.OpenAt(ctx, r, size, name, &imgio.Options{MaxMemory: room})
	if err != nil {
		mem.settle(room, 0)
		return "", "", err
	}
	if _, err := srv.AddImage(id, name, img); err != nil {
		mem.settle(room, 0)
		img.Close()
		// Opened twice at once: the other open won, and it is the same content.
		if known, ok := srv.LocalImage(id); ok {
			return id, known, nil
		}
		return "", "", err
	}
	mem.settle(room, img.HeldInMemory())
	return id, name, nil
}
