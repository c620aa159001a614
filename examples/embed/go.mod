module example.com/embed

go 1.25.0

require github.com/tether-run/tether v0.0.0

require (
	github.com/godbus/dbus/v5 v5.2.4 // indirect
	golang.org/x/sys v0.41.0 // indirect
)

replace github.com/tether-run/tether => ../..
