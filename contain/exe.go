package contain

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"github.com/tether-run/tether/internal/atomicfile"
	"github.com/tether-run/tether/receipt"
)

// exeHashMax bounds the program files hashed for a receipt: past it the
// receipt says the file was not hashed, and why.
const exeHashMax = 512 << 20

// exeCacheMin is the size from which a file's digest is kept in the state
// dir (hashes/DEV-INODE), keyed by its size, mtime and ctime: a browser's
// 250 MB binary is hashed once, not per run. Smaller files hash faster
// than the cache is read.
const exeCacheMin = 1 << 20

// exeIdentity is the identity of a run's main program and of the running
// program itself, found in the background from the start: the start
// does not wait for it, the end of the run does.
type exeIdentity struct {
	done chan struct{}
	main *receipt.Executable
	self *receipt.Executable
}

// identifyExe begins finding the program file the command names (path,
// resolved) — proven the very file process pid executes where the system
// can tell ("proc") — and the running program's own file, hashes cached
// under stateDir (empty: none). A script's file is the script: the
// process then executes its interpreter, and Via is "path".
func identifyExe(pid int, path, stateDir string) *exeIdentity {
	x := &exeIdentity{done: make(chan struct{})}
	go func() {
		defer close(x.done)
		f, _ := os.Open(path)
		via := "path"
		if f != nil && executes(pid, f) {
			via = "proc"
		}
		x.main = describeExe(f, path, via, stateDir)
		x.self = selfExe(stateDir)
	}()
	return x
}

// wait waits for the identity to be found.
func (x *exeIdentity) wait() {
	if x != nil {
		<-x.done
	}
}

// into waits for the identity and puts it in r.
func (x *exeIdentity) into(r *receipt.Receipt) {
	if x == nil {
		return
	}
	<-x.done
	r.Executable = x.main
	r.Tether.Executable = x.self
}

// self is the running program's own file, found once per process.
var self struct {
	sync.Mutex
	exe *receipt.Executable
}

// selfExe returns a copy of the running program's identity.
func selfExe(stateDir string) *receipt.Executable {
	self.Lock()
	defer self.Unlock()
	if self.exe == nil {
		f, p, err := openSelf()
		if err != nil {
			self.exe = &receipt.Executable{Path: p, Via: "self", SHA256Skipped: "cannot open: " + err.Error()}
		} else {
			self.exe = describeExe(f, p, "self", stateDir)
		}
	}
	e := *self.exe
	return &e
}

// describeExe identifies the open file f (nil: it could not be opened)
// and closes it.
func describeExe(f *os.File, path, via, stateDir string) *receipt.Executable {
	e := &receipt.Executable{Path: path, Via: via}
	if f == nil {
		e.SHA256Skipped = "cannot open"
		return e
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		e.SHA256Skipped = "cannot stat: " + err.Error()
		return e
	}
	e.Size = st.Size()
	key := fileKeyOf(st)
	e.Device, e.Inode = key.dev, key.ino
	switch {
	case !st.Mode().IsRegular():
		e.SHA256Skipped = "not a regular file"
	case e.Size > exeHashMax:
		e.SHA256Skipped = fmt.Sprintf("larger than %d MiB", exeHashMax>>20)
	default:
		e.SHA256, err = hashCached(f, st, key, stateDir)
		if err != nil {
			e.SHA256Skipped = "cannot read: " + err.Error()
		}
	}
	return e
}

// fileKey is what tells a file apart over time: which file (device and
// inode; zero where the system has none) and which contents (size, mtime,
// ctime — a write changes ctime, which no user can set).
type fileKey struct {
	dev, ino     uint64
	mtime, ctime int64
}

// hashCached returns f's SHA-256, from the cache in stateDir when the key
// matches, else hashing it (and caching the result when it is big).
func hashCached(f *os.File, st fs.FileInfo, key fileKey, stateDir string) (string, error) {
	cache := ""
	if stateDir != "" && st.Size() >= exeCacheMin && key.ino != 0 {
		cache = filepath.Join(stateDir, "hashes", strconv.FormatUint(key.dev, 10)+"-"+strconv.FormatUint(key.ino, 10))
	}
	stamp := fmt.Sprintf("%d %d %d ", st.Size(), key.mtime, key.ctime)
	if cache != "" {
		if b, err := readSmall(cache); err == nil {
			if sum, ok := strings.CutPrefix(strings.TrimSpace(string(b)), stamp); ok && len(sum) == 64 {
				return sum, nil
			}
		}
	}
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	sum := hex.EncodeToString(h.Sum(nil))
	if cache != "" {
		if err := os.Mkdir(filepath.Dir(cache), 0o700); err == nil || errors.Is(err, fs.ErrExist) {
			atomicfile.Replace(cache, []byte(stamp+sum+"\n"), 0o600)
		}
	}
	return sum, nil
}

// readSmall reads a cache entry, never through a symlink.
func readSmall(path string) ([]byte, error) {
	f, err := openNoFollow(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, 256))
}
