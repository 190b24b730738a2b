module bakeoff/stacks/{{stack}}

go {{go_version}}
