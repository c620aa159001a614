module example.com/leaky

go 1.25.0
