module bakeoff/stacks/go/iocopy

go 1.26
