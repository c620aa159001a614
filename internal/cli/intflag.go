package cli

import (
	"errors"
	"strconv"

	"github.com/spf13/pflag"
)

// intValue is the type of tether's whole-number flags: pflag's own
// answers a bad value in strconv's words ("strconv.ParseInt: parsing
// ...: invalid syntax"); pflag names the flag and the value around ours.
type intValue int

func (v *intValue) Set(s string) error {
	n, err := strconv.Atoi(s)
	switch {
	case errors.Is(err, strconv.ErrRange):
		return errors.New("too large a number")
	case err != nil:
		return errors.New("want a whole number")
	}
	*v = intValue(n)
	return nil
}

func (v *intValue) Type() string   { return "int" }
func (v *intValue) String() string { return strconv.Itoa(int(*v)) }

// intVarP defines a whole-number flag of the type above.
func intVarP(fl *pflag.FlagSet, p *int, name, short string, def int, usage string) {
	*p = def
	fl.VarP((*intValue)(p), name, short, usage)
}
