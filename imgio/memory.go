package imgio

import (
	"context"
	"fmt"
	"io"
	"sync"

	"github.com/zrviz/zrviz/internal/units"
)

// DefaultMaxMemory bounds the non-zero blocks [LoadMemory] keeps when [Options].MaxMemory is 0:
// 192 MiB, so that a browser's worker holding one image stays within 256 MB.
const DefaultMaxMemory int64 = 192 << 20

// LoadMemory is [LoadContext] into memory instead of a temporary file: for a process with no file
// system (the static site's WebAssembly build, cmd/zrviz-wasm). The stream is expanded with the same
// checks; an all-zero 4 KiB block is never stored (the expansion skips them), so an F2FS image costs
// about what it holds. Past opt.MaxMemory bytes of stored blocks the load stops with a
// [*MemoryError] naming the bound and the output offset reached.
func LoadMemory(ctx context.Context, r io.Reader, name string, opt *Options) (*Image, error) {
	limit := DefaultMaxMemory
	if opt != nil && opt.MaxMemory > 0 {
		limit = opt.MaxMemory
	}
	m := &memImage{limit: limit, blocks: map[int64][]byte{}}
	format, size, err := ExpandContext(ctx, m, r, opt)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	m.size = size
	img, err := NewImage(m, size)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	img.name, img.format = name, format
	return img, nil
}

// MemoryError reports an image whose non-zero blocks would take more memory than [LoadMemory]'s
// bound: Off is the output offset of the block that did not fit.
type MemoryError struct {
	Limit int64
	Off   int64
}

func (e *MemoryError) Error() string {
	return fmt.Sprintf("imgio: the image's non-zero blocks take more than %s of memory (the bound of an image "+
		"held in memory): stopped at byte %s of the expanded image", units.Bytes(e.Limit), units.Group(e.Off))
}

// memImage is an image held as its non-zero 4 KiB blocks: an io.WriterAt for the expansion, an
// io.ReaderAt for the reader (zeros where nothing was written).
type memImage struct {
	mu     sync.RWMutex
	limit  int64
	used   int64
	size   int64
	blocks map[int64][]byte // block index → expandBlock bytes
}

func (m *memImage) WriteAt(p []byte, off int64) (int, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := 0
	for n < len(p) {
		at := off + int64(n)
		bi, in := at/expandBlock, int(at%expandBlock)
		b := m.blocks[bi]
		if b == nil {
			if m.used+expandBlock > m.limit {
				return n, &MemoryError{Limit: m.limit, Off: at}
			}
			b = make([]byte, expandBlock)
			m.blocks[bi] = b
			m.used += expandBlock
		}
		n += copy(b[in:], p[n:])
	}
	return n, nil
}

func (m *memImage) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, fmt.Errorf("imgio: negative offset %d", off)
	}
	m.mu.RLock()
	defer m.mu.RUnlock()
	n := 0
	for n < len(p) {
		at := off + int64(n)
		if at >= m.size {
			return n, io.EOF
		}
		bi, in := at/expandBlock, int(at%expandBlock)
		end := min(len(p), n+expandBlock-in, n+int(m.size-at))
		if b := m.blocks[bi]; b != nil {
			copy(p[n:end], b[in:])
		} else {
			clear(p[n:end])
		}
		n = end
	}
	return n, nil
}

// HeldInMemory is the bytes of blocks an image [LoadMemory] made holds (0 for an image read in
// place): what the static site counts against its bound on unpacked images.
func (img *Image) HeldInMemory() int64 {
	m, ok := img.r.(*memImage)
	if !ok {
		return 0
	}
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.used
}
