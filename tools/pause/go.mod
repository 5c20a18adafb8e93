module capstan.dev/tools/pause

go 1.24
