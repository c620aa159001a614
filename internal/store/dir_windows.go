package store

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"unsafe"

	"golang.org/x/sys/windows"

	"github.com/tether-run/tether/registry"
)

// Registry is one user's state directory.
type Registry struct {
	Dir string
	sid *windows.SID // the user whose state it is: every entry must be theirs
	// owner is the owner the user's token gives what it creates: the
	// user, or the Administrators for an elevated administrator.
	owner *windows.SID
	// sddl is the protected DACL every directory of the state gets: full
	// access for that user and SYSTEM, nothing for anyone else (the
	// equivalent of 0700, inherited by what is created inside).
	sddl string
}

func newRegistry(dir string) (*Registry, error) {
	u, err := windows.GetCurrentProcessToken().GetTokenUser()
	if err != nil {
		return nil, fmt.Errorf("registry: who am I: %w", err)
	}
	sid, err := u.User.Sid.Copy()
	if err != nil {
		return nil, err
	}
	owner, err := tokenOwner()
	if err != nil {
		return nil, fmt.Errorf("registry: who owns what I create: %w", err)
	}
	return &Registry{Dir: dir, sid: sid, owner: owner, sddl: "D:P(A;OICI;FA;;;SY)(A;OICI;FA;;;" + sid.String() + ")"}, nil
}

// tokenOwner is the default owner of the objects this process creates.
func tokenOwner() (*windows.SID, error) {
	t := windows.GetCurrentProcessToken()
	var n uint32
	windows.GetTokenInformation(t, windows.TokenOwner, nil, 0, &n)
	if n == 0 {
		return nil, errors.New("no TokenOwner")
	}
	b := make([]byte, n)
	if err := windows.GetTokenInformation(t, windows.TokenOwner, &b[0], n, &n); err != nil {
		return nil, err
	}
	return (*struct{ Owner *windows.SID })(unsafe.Pointer(&b[0])).Owner.Copy()
}

// DefaultDir returns the state directory: %TETHER_STATE_DIR% when set
// (tests and wrappers point it elsewhere; Wine sets LOCALAPPDATA itself,
// whatever the caller gave), else %LOCALAPPDATA%\tether. getenv is
// os.Getenv in production. XDG_RUNTIME_DIR is not read on Windows: Wine
// passes the Linux one, a path Windows cannot use.
func DefaultDir(getenv func(string) string) (string, error) {
	v, d := "TETHER_STATE_DIR", getenv("TETHER_STATE_DIR")
	if d == "" {
		v, d = "LOCALAPPDATA", getenv("LOCALAPPDATA")
		if d == "" {
			return "", errors.New("registry: no state directory: neither TETHER_STATE_DIR nor LOCALAPPDATA is set")
		}
		d = filepath.Join(d, "tether")
	}
	if !filepath.IsAbs(d) || strings.ContainsFunc(d, func(r rune) bool { return r < ' ' || r == 0x7f }) {
		return "", fmt.Errorf("%w: %s=%q: not an absolute path of printable characters; set it to an absolute directory", registry.ErrBadEnv, v, d)
	}
	return d, nil
}

// mkdirPrivate creates the directory d with the registry's protected DACL.
func (r *Registry) mkdirPrivate(d string) error {
	sd, err := windows.SecurityDescriptorFromString(r.sddl)
	if err != nil {
		return err
	}
	p, err := windows.UTF16PtrFromString(d)
	if err != nil {
		return err
	}
	sa := &windows.SecurityAttributes{Length: uint32(unsafe.Sizeof(windows.SecurityAttributes{})), SecurityDescriptor: sd}
	if err := windows.CreateDirectory(p, sa); err != nil {
		return &os.PathError{Op: "mkdir", Path: d, Err: err}
	}
	return nil
}

// checkDir refuses a directory that is a reparse point (a symlink or a
// junction), not the user's, or open to anyone but the user, SYSTEM and
// the Administrators.
func (r *Registry) checkDir(d string) error {
	st, err := os.Lstat(d)
	if err != nil {
		return err
	}
	switch {
	case st.Mode()&(os.ModeSymlink|os.ModeIrregular) != 0:
		return fmt.Errorf("%w: %s is a symlink or junction; tether does not follow them in its state", registry.ErrUnsafe, d)
	case !st.IsDir():
		return fmt.Errorf("%w: %s is not a directory", registry.ErrUnsafe, d)
	}
	sd, err := windows.GetNamedSecurityInfo(d, windows.SE_FILE_OBJECT, windows.OWNER_SECURITY_INFORMATION|windows.DACL_SECURITY_INFORMATION)
	if err != nil {
		return &os.PathError{Op: "GetNamedSecurityInfo", Path: d, Err: err}
	}
	return r.checkSecurity(d, sd, anyAccess)
}

// The rights checkSecurity refuses to anyone but the user: any at all for
// a directory (as 0700 on Unix), writing for a file (as mode&022 on Unix:
// Wine, which does not inherit ACEs, gives every new file Everyone read).
const (
	anyAccess   = ^uint32(0)
	writeAccess = windows.FILE_WRITE_DATA | windows.FILE_APPEND_DATA | windows.FILE_WRITE_EA | windows.FILE_WRITE_ATTRIBUTES |
		windows.DELETE | windows.WRITE_DAC | windows.WRITE_OWNER | windows.GENERIC_WRITE | windows.GENERIC_ALL
)

// checkSecurity applies the ownership rules to the security descriptor of
// path p: owned by the user, and none of the rights in refused granted to
// anyone else (but SYSTEM and the Administrators, who can take any file
// anyway).
func (r *Registry) checkSecurity(p string, sd *windows.SECURITY_DESCRIPTOR, refused uint32) error {
	owner, _, err := sd.Owner()
	if err != nil {
		return &os.PathError{Op: "owner", Path: p, Err: err}
	}
	if !owner.Equals(r.sid) && !owner.Equals(r.owner) {
		return fmt.Errorf("%w: %s is owned by %s, not %s; tether will not use another user's state", registry.ErrUnsafe, p, owner, r.sid)
	}
	if other := r.othersAllowed(sd, refused); other != "" {
		return fmt.Errorf("%w: %s grants access to %s; it must be the user's alone (tether creates it so: remove it and let tether make it again)", registry.ErrUnsafe, p, other)
	}
	return nil
}

// othersAllowed names a SID other than the user, SYSTEM and the
// Administrators that an allow entry of sd's DACL grants one of the
// rights in refused ("" if none). A missing DACL grants everyone
// everything.
func (r *Registry) othersAllowed(sd *windows.SECURITY_DESCRIPTOR, refused uint32) string {
	dacl, _, err := sd.DACL()
	if err != nil || dacl == nil {
		return "everyone (no DACL)"
	}
	for i := uint32(0); i < uint32(dacl.AceCount); i++ {
		var ace *windows.ACCESS_ALLOWED_ACE
		if windows.GetAce(dacl, i, &ace) != nil {
			return "an unreadable entry"
		}
		if ace.Header.AceType != windows.ACCESS_ALLOWED_ACE_TYPE || uint32(ace.Mask)&refused == 0 {
			continue
		}
		sid := (*windows.SID)(unsafe.Pointer(&ace.SidStart))
		if sid.Equals(r.sid) || sid.Equals(r.owner) || sid.IsWellKnown(windows.WinLocalSystemSid) || sid.IsWellKnown(windows.WinBuiltinAdministratorsSid) || sid.IsWellKnown(windows.WinCreatorOwnerSid) {
			continue
		}
		return sid.String()
	}
	return ""
}

// ReadFile reads a file of the state dir (a record, a receipt, a
// session's spec.json) as the registry reads records: never through a
// reparse point (registry.ErrUnsafe), only a regular file (registry.ErrCorrupt "not a
// regular file"), only the user's and open to no one else (registry.ErrUnsafe), at
// most max bytes (registry.ErrCorrupt). A missing file is an error wrapping
// os.ErrNotExist.
func (r *Registry) ReadFile(p string, max int64) ([]byte, error) {
	f, info, err := r.openChecked(p, windows.GENERIC_READ, windows.OPEN_EXISTING)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readBounded(f, p, int64(info.FileSizeHigh)<<32|int64(info.FileSizeLow), max)
}

// openChecked opens the file p of the state (creating it with
// disposition OPEN_ALWAYS) under ReadFile's rules, and returns it with
// what the handle says of it.
func (r *Registry) openChecked(p string, access, disposition uint32) (*os.File, *windows.ByHandleFileInformation, error) {
	u, err := windows.UTF16PtrFromString(p)
	if err != nil {
		return nil, nil, err
	}
	// FILE_FLAG_OPEN_REPARSE_POINT opens a symlink itself, which is then
	// refused, instead of its target.
	h, err := windows.CreateFile(u, access|windows.READ_CONTROL, windows.FILE_SHARE_READ|windows.FILE_SHARE_WRITE|windows.FILE_SHARE_DELETE,
		nil, disposition, windows.FILE_FLAG_OPEN_REPARSE_POINT|windows.FILE_FLAG_BACKUP_SEMANTICS, 0)
	if err != nil {
		if errors.Is(err, windows.ERROR_FILE_NOT_FOUND) || errors.Is(err, windows.ERROR_PATH_NOT_FOUND) {
			err = os.ErrNotExist
		}
		return nil, nil, &os.PathError{Op: "open", Path: p, Err: err}
	}
	f := os.NewFile(uintptr(h), p)
	info := new(windows.ByHandleFileInformation)
	if err := windows.GetFileInformationByHandle(h, info); err != nil {
		f.Close()
		return nil, nil, &os.PathError{Op: "stat", Path: p, Err: err}
	}
	switch {
	case info.FileAttributes&windows.FILE_ATTRIBUTE_REPARSE_POINT != 0:
		err = fmt.Errorf("%w: %s is a symlink", registry.ErrUnsafe, p)
	case info.FileAttributes&windows.FILE_ATTRIBUTE_DIRECTORY != 0:
		err = fmt.Errorf("%w: %s is not a regular file", registry.ErrCorrupt, p)
	}
	if err == nil {
		var sd *windows.SECURITY_DESCRIPTOR
		if sd, err = windows.GetSecurityInfo(h, windows.SE_FILE_OBJECT, windows.OWNER_SECURITY_INFORMATION|windows.DACL_SECURITY_INFORMATION); err != nil {
			err = &os.PathError{Op: "GetSecurityInfo", Path: p, Err: err}
		} else {
			err = r.checkSecurity(p, sd, writeAccess)
		}
	}
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, info, nil
}

// OpenFile opens the file p of a state dir for reading under ReadFile's
// rules (a session's log, read as it grows).
func OpenFile(p string) (*os.File, error) {
	r, err := newRegistry("")
	if err != nil {
		return nil, err
	}
	f, _, err := r.openChecked(p, windows.GENERIC_READ, windows.OPEN_EXISTING)
	return f, err
}
