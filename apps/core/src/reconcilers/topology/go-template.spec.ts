import {
  DEFAULT_MAX_OUTPUT_BYTES,
  DEFAULT_MAX_STEPS,
  GoTemplateError,
  MAX_NESTING_DEPTH,
  MAX_TEMPLATE_BYTES,
  renderGoTemplate,
  type GoTemplateOptions,
} from './go-template.js';

const err = (message: string) => ({ error: message });
type Expected = string | { error: string };
type Case =
  | [template: string, expected: Expected]
  | [template: string, data: unknown, expected: Expected]
  | [template: string, data: unknown, expected: Expected, options: GoTemplateOptions];

/** What rendering gives: the output, or the GoTemplateError's message (anything else fails the test). */
function outcome(template: string, data?: unknown, options?: GoTemplateOptions): Expected {
  try {
    return renderGoTemplate(template, data, options);
  } catch (error) {
    if (!(error instanceof GoTemplateError)) throw error;
    return err(error.message);
  }
}

function failure(template: string, data?: unknown, options?: GoTemplateOptions): GoTemplateError {
  try {
    renderGoTemplate(template, data, options);
  } catch (error) {
    expect(error).toBeInstanceOf(GoTemplateError);
    return error as GoTemplateError;
  }
  throw new Error(`rendered ${JSON.stringify(template)}`);
}

// Every expected output and message in this table was produced by Go 1.26: text/template with
// sprig.HermeticTxtFuncMap() from sprig v3.3.0 (upstream's library and version), template name "tpl", the data
// decoded by encoding/json into interface{} as upstream decodes ClusterClass variables; rows with sprig: false and
// missingKey: 'error' were rendered as upstream's naming templates are (no sprig, Option("missingkey=error")).
const GO_VERIFIED: Record<string, Case[]> = {
  'text, trim markers and comments': [
    ['plain text', 'plain text'],
    ['a  {{- "b" -}}  c', 'abc'],
    ['a  {{-1}}  b', 'a  -1  b'],
    ['a {{ 1 -}}\n\n b', 'a 1b'],
    ['a {{- /* gone */ -}} b', 'ab'],
    ['a {{/* multi\nline */}} b', 'a  b'],
    ['{{ "x" }}{{/* c */}}{{ "y" }}', 'xy'],
  ],
  'fields, variables and missing keys': [
    ['{{ .builtin.cluster.name }}', { builtin: { cluster: { name: 'c1' } } }, 'c1'],
    ['{{ .missing }}', {}, '<no value>'],
    ['{{ .a.b }}', {}, '<no value>'],
    ['{{ .n }}', { n: null }, '<no value>'],
    ['{{ (.n).b }}', { n: null }, '<no value>'],
    ['{{ $x := .n }}{{ $x.b }}', { n: null }, '<no value>'],
    ['{{ . }}', { b: 1, a: 'x' }, 'map[a:x b:1]'],
    ['{{ $.a }}{{ with .a }}{{ $.a.b }}{{ . }}{{ end }}', { a: { b: 2 } }, 'map[b:2]2map[b:2]'],
    ['{{ $x := 1 }}{{ $x }}{{ $x = 2 }}{{ $x }}', '12'],
    ['{{ $x := 1 }}{{ if true }}{{ $x = 2 }}{{ $y := 3 }}{{ end }}{{ $x }}', '2'],
    ['{{ if $x := .v }}{{ $x }}{{ else }}no {{ $x }}{{ end }}', { v: 0 }, 'no 0'],
    [
      '{{ (dict "k" "v").k }}|{{ (list 1).x }}',
      err('template: tpl:1:32: executing "tpl" at <1>: can\'t evaluate field x in type []interface {}'),
    ],
  ],
  'literals and pipelines': [
    ['{{ "a\\tb\\x41\\u00e9\\101" }}|{{ `raw\\n` }}', 'a\tbAéA|raw\\n'],
    [
      "{{ 'a' }} {{ '\\n' }} {{ 0x1F }} {{ 0o17 }} {{ 017 }} {{ 0b101 }} {{ 1_000 }} {{ -3 }} {{ +3 }}",
      '97 10 31 15 15 5 1000 -3 3',
    ],
    ['{{ 1.5 }} {{ 1e6 }} {{ 1e3 }} {{ 0x1p4 }} {{ 1.0 }} {{ -0x1e }}', '1.5 1e+06 1000 16 1 -30'],
    ['{{ true }} {{ false }} {{ printf "%v" nil }}', 'true false <nil>'],
    ['{{ .a | printf "%s-%s" "x" }}', { a: 'y' }, 'x-y'],
    ['{{ 1 | printf "%v" | len }}', '1'],
    ['{{ (1) }}{{ ("a") }}{{ (print 1 2) }}', '1a1 2'],
    ['{{ "x" | printf "%s%s" "a" | printf "%s!" }}', 'ax!'],
  ],
  'JSON values print as Go prints float64, maps and slices': [
    [
      '{{ .m }}',
      { m: { b: 1, a: 'x', c: null, d: [1, 2.5, 's', true, null, {}], e: { z: 1 } } },
      'map[a:x b:1 c:<nil> d:[1 2.5 s true <nil> map[]] e:map[z:1]]',
    ],
    [
      '{{ .a }} {{ .b }} {{ .c }} {{ .d }} {{ .e }} {{ .f }} {{ .g }}',
      { a: 1000000, b: 123456, c: 1234567, d: 1e21, e: 0.0001, f: 0.00001, g: -2.5 },
      '1e+06 123456 1.234567e+06 1e+21 0.0001 1e-05 -2.5',
    ],
    ['{{ .port }}:{{ .replicas }}', { port: 6443, replicas: 3 }, '6443:3'],
    ['{{ .l }}|{{ .e }}|{{ .m }}', { l: [1, 'a', null], e: [], m: {} }, '[1 a <nil>]|[]|map[]'],
  ],
  'if, with and truthiness': [
    ['{{ if .a }}a{{ else if .b }}b{{ else }}c{{ end }}', { b: 1 }, 'b'],
    ['{{ if .a }}a{{ else if .b }}b{{ else }}c{{ end }}', { a: '', b: 0 }, 'c'],
    ['{{ with .a }}{{ .b }}{{ else }}none{{ end }}', { a: { b: 1 } }, '1'],
    ['{{ with .a }}{{ .b }}{{ else with .c }}c{{ . }}{{ else }}none{{ end }}', { a: {}, c: 5 }, 'c5'],
    [
      '{{ range $v := list "" 0 0.0 false nil (list) (dict) "x" 1 true (list 0) }}{{ if $v }}T{{ else }}F{{ end }}{{ end }}',
      'FFFFFFFTTTT',
    ],
    [
      '{{ if and .a (not .b) }}yes{{ end }}|{{ and 1 0 2 }}|{{ and 1 2 }}|{{ or 0 "" }}|{{ or 0 3 }}|{{ not 0 }}',
      { a: true, b: false },
      'yes|0|2||3|true',
    ],
    ['{{ and 0 (fail "never evaluated") }}|{{ or 1 (fail "never evaluated") }}', '0|1'],
    ['{{ 0 | and 1 }}|{{ or .missing }}', '0|<no value>'],
  ],
  range: [
    ['{{ range .l }}[{{ . }}]{{ end }}', { l: [1, null, 'x'] }, '[1][<no value>][x]'],
    ['{{ range $i, $v := .l }}{{ $i }}={{ $v }};{{ end }}', { l: ['a', 'b'] }, '0=a;1=b;'],
    [
      '{{ range $k, $v := .m }}{{ $k }}={{ $v }};{{ end }}',
      { m: { b: 1, a: 2, é: 3, Z: 4 } },
      'Z=4;a=2;b=1;é=3;',
    ],
    ['{{ range .m }}{{ . }}{{ end }}', { m: { b: 1, a: 2 } }, '21'],
    ['{{ range 3 }}{{ . }}{{ end }}|{{ range $i := 2 }}{{ $i }}{{ end }}', '012|01'],
    [
      '{{ range .l }}x{{ else }}empty{{ end }}|{{ range .missing }}x{{ else }}none{{ end }}',
      { l: [] },
      'empty|none',
    ],
    [
      '{{ range .l }}{{ if eq . 2.0 }}{{ continue }}{{ end }}{{ if eq . 4.0 }}{{ break }}{{ end }}{{ . }}{{ end }}',
      { l: [1, 2, 3, 4, 5] },
      '13',
    ],
    ['{{ $i := 9 }}{{ $v := 9 }}{{ range $i, $v = .l }}{{ end }}{{ $i }}{{ $v }}', { l: ['a', 'b'] }, '1b'],
    ['{{ $x := 1 }}{{ range .l }}{{ $x = . }}{{ end }}{{ $x }}', { l: [1, 2, 3] }, '3'],
    ['{{ range until 3 }}{{ . }}{{ end }}|{{ range splitList "," "a,b" }}{{ . }}{{ end }}', '012|ab'],
  ],
  'builtin functions': [
    ['{{ len .l }} {{ len .m }} {{ len "héllo" }} {{ len "" }}', { l: [1, 2], m: { a: 1 } }, '2 1 6 0'],
    [
      '{{ index .m "x" }}|{{ index .m "missing" }}|{{ index .l 1 }}|{{ index .n "a" "b" }}|{{ index "abc" 1 }}',
      { m: { x: 1 }, l: [1, 2], n: { a: { b: 7 } } },
      '1|<no value>|2|7|98',
    ],
    [
      '{{ slice .l 1 2 }}|{{ slice .l 1 }}|{{ slice "hello" 1 3 }}|{{ slice .l }}',
      { l: [1, 2, 3] },
      '[2]|[2 3]|el|[1 2 3]',
      { sprig: false },
    ],
    [
      '{{ print 1 2 "a" "b" 3 .n }}|{{ print "a" 1 "b" }}|{{ println 1 "a" }}',
      { n: null },
      '1 2ab3 <nil>|a1b|1 a\n',
    ],
    [
      '{{ eq 1 1 }} {{ eq 1 2 1 }} {{ eq "a" "a" }} {{ eq .f 1.5 }} {{ ne 1 2 }} {{ eq .missing "x" }} {{ eq nil nil }} {{ eq (add 1 2) 3 }}',
      { f: 1.5 },
      'true true true true true false true true',
    ],
    [
      '{{ lt 1 2 }} {{ le 2 2 }} {{ gt "b" "a" }} {{ ge 1.5 2.5 }} {{ lt .a .b }}',
      { a: 1, b: 2 },
      'true true true false true',
    ],
    [
      '{{ html "<a href=\'x\'>&</a>" }}|{{ js "it\'s <b>\\u2028" }}|{{ urlquery "a b&c/d" }}',
      "&lt;a href=&#39;x&#39;&gt;&amp;&lt;/a&gt;|it\\'s \\u003Cb\\u003E\\u2028|a+b%26c%2Fd",
    ],
  ],
  printf: [
    ['{{ printf "%d %s %v %q %t" 1 "a" 2.5 "q" true }}', '1 a 2.5 "q" true'],
    [
      '{{ printf "%5d|%-5s|%05d|%.2f|%x|%X|%o|%b|%e|%g|%c|%U|%8.3f|%+d" 3 "ab" 42 3.14159 255 255 8 5 1234.5678 0.000001 65 65 2.5 5 }}',
      '    3|ab   |00042|3.14|ff|FF|10|101|1.234568e+03|1e-06|A|U+0041|   2.500|+5',
    ],
    ['{{ printf "%.0f|%.0f|%.1f|%.2f" 0.5 2.5 1.25 1.005 }}', '0|2|1.2|1.00'],
    ['{{ printf "%v %v %v %v" 1e20 1e21 123456789.0 0.1 }}', '1e+20 1e+21 1.23456789e+08 0.1'],
    [
      '{{ printf "%T %T %T %T %T %T %T" 1 .f "s" true .m .l nil }}',
      { f: 1, m: {}, l: [] },
      'int float64 string bool map[string]interface {} []interface {} <nil>',
    ],
    [
      '{{ printf "%d" .f }}|{{ printf "%s" 3 }}|{{ printf "%d" }}|{{ printf "%d" 1 2 }}|{{ printf "%z" 1 }}|{{ printf "%!" }}',
      { f: 2 },
      '%!d(float64=2)|%!s(int=3)|%!d(MISSING)|1%!(EXTRA int=2)|%!z(int=1)|%!!(MISSING)',
    ],
    [
      '{{ printf "%v|%d|%q|%s" .l .l .l .l }}',
      { l: [1, 'a', null] },
      '[1 a <nil>]|[%!d(float64=1) %!d(string=a) <nil>]|[%!q(float64=1) "a" <nil>]|[%!s(float64=1) a <nil>]',
    ],
    ['{{ printf "%v|%s" .m .m }}', { m: { a: 1 } }, 'map[a:1]|map[a:%!s(float64=1)]'],
    [
      '{{ printf "%[2]s %[1]s" "a" "b" }}|{{ printf "%*d|%.*f" 5 1 2 3.14159 }}|{{ printf "%q %+q %#q" "a\\"b" "é" "raw" }}',
      'b a|    1|3.14|"a\\"b" "\\u00e9" `raw`',
    ],
    [
      '{{ printf "%#v|%#v|%#v" .m .l "s" }}',
      { m: { a: 1, c: null }, l: [1, 'a'] },
      'map[string]interface {}{"a":1, "c":interface {}(nil)}|[]interface {}{1, "a"}|"s"',
    ],
    [
      '{{ printf "%x %X %x %.2x %.0x %b %x" -0.1 255.5 0.0 1.999 1.5 -2.0 .f }}',
      { f: 0.3 },
      '-0x1.999999999999ap-04 0X1.FFP+07 0x0p+00 0x1.00p+01 0x1p+01 -4503599627370496p-51 0x1.3333333333333p-02',
    ],
    ['{{ urlquery .n "aGk=" }}|{{ html .n 1 }}', { n: null }, '%3Cno+value%3EaGk%3D|&lt;no value&gt;1'],
  ],
  'sprig: defaults and flow': [
    [
      '{{ default "x" .missing }}|{{ default "x" .n }}|{{ default "x" "" }}|{{ default "x" 0 }}|{{ "y" | default "x" }}|{{ default "x" .l }}',
      { n: null, l: [] },
      'x|x|x|x|y|x',
    ],
    [
      '{{ empty .missing }} {{ empty .n }} {{ empty .l }} {{ empty 0 }} {{ empty .m }} {{ empty "a" }}',
      { n: null, l: [], m: {} },
      'true true true true true false',
    ],
    ['{{ coalesce .a .b "c" }}|{{ coalesce .n }}', { a: '', b: 0, n: null }, 'c|<no value>'],
    [
      '{{ ternary "a" "b" true }}|{{ true | ternary "a" "b" }}|{{ ternary "a" "b" .t }}',
      { t: false },
      'a|a|b',
    ],
    [
      '{{ all 1 "a" }} {{ all 1 "" }} {{ any 0 "" }} {{ any 0 "a" }} {{ compact (list 1 0 "" "a") }}',
      'true false false true [1 a]',
    ],
  ],
  'sprig: strings': [
    [
      '{{ upper "abc" }} {{ lower "ABC" }} {{ title "hello wORLD foo-bar" }} [{{ trim "  a b \\n" }}]',
      'ABC abc Hello WORLD Foo-Bar [a b]',
    ],
    [
      '{{ trimPrefix "a" "aab" }}|{{ trimSuffix "b" "abb" }}|{{ trimAll "$" "$$a$b$$" }}|{{ replace "a" "x" "banana" }}|{{ replace "" "-" "abc" }}',
      'ab|ab|a$b|bxnxnx|-a-b-c-',
    ],
    [
      '{{ contains "an" "banana" }} {{ hasPrefix "ba" "banana" }} {{ hasSuffix "x" "banana" }}',
      'true true false',
    ],
    [
      '{{ quote "a" 1 .n "b\\"c" }}|{{ squote "a" 1 .n }}|{{ quote .missing }}',
      { n: null },
      '"a" "1" "b\\"c"|\'a\' \'1\'|',
    ],
    [
      '{{ indent 2 "a\\nb" }}|{{ nindent 4 "a" }}|{{ repeat 3 "ab" }}|{{ repeat 0 "x" }}',
      '  a\n  b|\n    a|ababab|',
    ],
    [
      '{{ substr 1 3 "hello" }}|{{ trunc 3 "hello" }}|{{ trunc -2 "hello" }}|{{ nospace " a b " }}|{{ cat "a" 1 .n "b" }}|{{ initials "hello big world" }}',
      { n: null },
      'el|hel|lo|ab|a 1 b|hbw',
    ],
    [
      '{{ split "," "a,b,c" }}|{{ (split "," "a,b")._1 }}|{{ splitList "," "a,b,c" }}|{{ splitList "," "" }}|{{ splitn "," 2 "a,b,c" }}',
      'map[_0:a _1:b _2:c]|b|[a b c]|[]|map[_0:a _1:b,c]',
    ],
    [
      '{{ join "-" (list 1 "a" .n 2.5) }}|{{ join "," .l }}|{{ toStrings .l }}|{{ sortAlpha (list "b" "a" "C") }}',
      { n: null, l: ['x', 1, null] },
      '1-a-2.5|x,1|[x 1]|[C a b]',
    ],
    [
      '{{ toString 1 }}|{{ toString 1.5 }}|{{ toString .f }}|{{ toString .n }}|{{ toString .l }}|{{ toString true }}',
      { f: 1e21, n: null, l: [1] },
      '1|1.5|1e+21|<nil>|[1]|true',
    ],
  ],
  'sprig: numbers and conversions': [
    ['{{ atoi "12" }}|{{ atoi "x" }}|{{ atoi "+5" }}|{{ atoi "1.0" }}', '12|0|5|0'],
    [
      '{{ int "12" }}|{{ int "1.0" }}|{{ int "1.5" }}|{{ int "0x10" }}|{{ int "010" }}|{{ int 2.9 }}|{{ int .f }}|{{ int true }}|{{ int .n }}',
      { f: -2.9, n: null },
      '12|1|0|16|8|2|-2|1|0',
    ],
    [
      '{{ int64 "12" }}|{{ float64 "1.5" }}|{{ float64 "x" }}|{{ float64 3 }}|{{ printf "%T %T %T %T" (int 1) (int64 1) (float64 1) (add 1 1) }}',
      '12|1.5|0|3|int int64 float64 int64',
    ],
    [
      '{{ add 1 2 }}|{{ add }}|{{ add 1.9 "2" .f }}|{{ sub 5 2 }}|{{ mul 2 3 4 }}|{{ div 7 2 }}|{{ mod 7 3 }}|{{ div -7 2 }}|{{ mod -7 3 }}|{{ add1 1 }}',
      { f: 0.5 },
      '3|0|3|3|24|3|1|-3|-1|2',
    ],
    [
      '{{ max 1 5 3 }}|{{ min 4 2 8 }}|{{ biggest 1 9 }}|{{ maxf 1 2.5 }}|{{ minf 1 2.5 }}|{{ floor 1.7 }}|{{ ceil 1.2 }}|{{ round 1.2345 2 }}',
      '5|2|9|2.5|1|1|2|1.23',
    ],
    [
      '{{ .replicas | int | add 1 }}|{{ printf "%s-%d" .name (int .n) }}',
      { replicas: 3, name: 'md', n: 3 },
      '4|md-3',
    ],
    [
      '{{ until 3 }}|{{ untilStep 0 10 3 }}|{{ seq 3 }}|{{ seq 5 2 }}|{{ toDecimal "0777" }}',
      '[0 1 2]|[0 3 6 9]|1 2 3|5 4 3 2|511',
    ],
  ],
  'sprig: lists and dicts': [
    [
      '{{ list 1 "a" .n }}|{{ list }}|{{ first .l }}|{{ last .l }}|{{ first .e }}|{{ rest .l }}|{{ initial .l }}|{{ reverse .l }}',
      { n: null, l: [1, 2, 3], e: [] },
      '[1 a <nil>]|[]|1|3|<no value>|[2 3]|[1 2]|[3 2 1]',
    ],
    [
      '{{ has 1 .l }}|{{ has 1.0 .l }}|{{ has "a" (list "a") }}|{{ has 1 .missing }}',
      { l: [1, 2] },
      'false|true|true|false',
    ],
    [
      '{{ uniq .l }}|{{ concat .l (list 4) (splitList "," "x,y") }}|{{ without .l 1.0 }}|{{ append .l 4 }}|{{ prepend .l 0 }}',
      { l: [1, 2, 1, 'a', 'a', null] },
      '[1 2 a <nil>]|[1 2 1 a a <nil> 4 x y]|[2 a a <nil>]|[1 2 1 a a <nil> 4]|[0 1 2 1 a a <nil>]',
    ],
    [
      '{{ chunk 2 .l }}|{{ chunk 3 .l }}|{{ chunk 2 (list) }}|{{ chunk -1 (list 1 2) }}|{{ slice .l 1 }}|{{ slice .l 1 2 }}',
      { l: [1, 2, 3] },
      '[[1 2] [3]]|[[1 2 3]]|[]|[]|[2 3]|[2]',
    ],
    [
      '{{ dict "a" 1 "b" }}|{{ dict 1 2 }}|{{ get .m "a" }}|{{ get .m "z" }}|{{ hasKey .m "a" }}|{{ hasKey .m "z" }}',
      { m: { a: 1 } },
      'map[a:1 b:]|map[1:2]|1||true|false',
    ],
    [
      '{{ $d := dict "a" 1 }}{{ $_ := set $d "b" 2 }}{{ $d }}|{{ unset $d "a" }}|{{ pick (dict "a" 1 "b" 2 "c" 3) "a" "c" }}|{{ omit (dict "a" 1 "b" 2) "a" }}',
      'map[a:1 b:2]|map[b:2]|map[a:1 c:3]|map[b:2]',
    ],
    [
      '{{ pluck "a" (dict "a" 1) (dict "b" 2) (dict "a" 3) }}|{{ dig "a" "b" "def" .m }}|{{ dig "a" "x" "def" .m }}',
      { m: { a: { b: 7 } } },
      '[1 3]|7|def',
    ],
    ['{{ keys .m .m2 }}|{{ keys }}', { m: { a: 1 }, m2: { c: 1 } }, '[a c]|[]'],
  ],
  'sprig: JSON and encodings': [
    [
      '{{ toJson .m }}|{{ toJson .missing }}|{{ toJson "<a&b>" }}|{{ toRawJson "<a&b>" }}|{{ toJson 1.5 }}',
      { m: { b: [1, 2.5, 'x', null, true], a: {}, c: 1e21, d: 1e-7, e: 100000000000000000000 } },
      '{"a":{},"b":[1,2.5,"x",null,true],"c":1e+21,"d":1e-7,"e":100000000000000000000}|null|"\\u003ca\\u0026b\\u003e"|"<a&b>"|1.5',
    ],
    [
      '{{ toPrettyJson .m }}|{{ toPrettyJson .e }}',
      { m: { b: [1, { x: [] }], a: {} }, e: {} },
      '{\n  "a": {},\n  "b": [\n    1,\n    {\n      "x": []\n    }\n  ]\n}|{}',
    ],
    [
      '{{ list .a .b | toJson }}|{{ dict "k" .v | toJson }}|{{ toJson (rest (list)) }}',
      { a: 'x', b: 1.5, v: [1, { z: null }] },
      '["x",1.5]|{"k":[1,{"z":null}]}|null',
    ],
    [
      '{{ fromJson "{\\"a\\":[1,2]}" }}|{{ fromJson "bad" }}|{{ (fromJson "{\\"a\\":1}").a }}',
      'map[a:[1 2]]|<no value>|1',
    ],
    [
      '{{ b64enc "hello" }}|{{ b64dec "aGVsbG8=" }}|{{ b64dec "!!" }}|{{ b64dec "aGVsbG8" }}|{{ b32enc "hello" }}|{{ b32dec "NBSWY3DP" }}',
      'aGVsbG8=|hello|illegal base64 data at input byte 0|illegal base64 data at input byte 4|NBSWY3DP|hello',
    ],
    [
      '{{ sha256sum "abc" }}|{{ sha1sum "abc" }}|{{ adler32sum "abc" }}',
      'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad|a9993e364706816aba3e25717850c26c9cd0d89d|38600999',
    ],
  ],
  'sprig: regular expressions (RE2)': [
    [
      '{{ regexMatch "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$" "my-cluster-1" }}|{{ regexMatch "^\\\\d{3}$" "1234" }}|{{ regexMatch "(" "x" }}|{{ regexMatch "(?m)^b$" "a\\nb" }}|{{ regexMatch "(?i)ABC" "abc" }}',
      'true|false|false|true|true',
    ],
    [
      '{{ regexReplaceAll "a(x*)b" "-ab-axxb-" "${1}W" }}|{{ regexReplaceAll "a(x*)b" "-ab-axxb-" "$1W" }}|{{ regexReplaceAll "a*" "baaac" "-" }}|{{ regexReplaceAllLiteral "a" "aa" "$1" }}',
      '-W-xxW-|---|-b-c-|$1$1',
    ],
    [
      '{{ regexReplaceAll "(?P<first>\\\\w+) (?P<last>\\\\w+)" "John Smith" "${last}, ${first}" }}|{{ regexReplaceAll "[^a-z0-9-]" "My_Cluster.1" "-" }}',
      'Smith, John|-y--luster-1',
    ],
    [
      '{{ regexFind "[0-9]+" "ab123cd45" }}|{{ regexFindAll "[0-9]+" "ab123cd45e6" -1 }}|{{ regexSplit "[,;]" "a,b;c" -1 }}|{{ regexQuoteMeta "a.b*c" }}',
      '123|[123 45 6]|[a b c]|a\\.b\\*c',
    ],
    [
      '{{ regexMatch "[[:alpha:]]+" "abc" }}|{{ regexMatch "\\\\pL" "é" }}|{{ regexMatch "\\\\bfoo\\\\b" "a foo b" }}|{{ regexFind "a+?" "aaa" }}|{{ regexFind "(a|ab)(c|bcd)" "abcd" }}',
      'true|true|true|a|abcd',
    ],
  ],
  'sprig: semverCompare': [
    [
      '{{ semverCompare ">=1.2.3" "1.3.0" }}|{{ semverCompare "~1.2" "1.3.0" }}|{{ semverCompare "^1.2" "1.9.0" }}|{{ semverCompare ">1, <2 || 3.x" "3.1.0" }}',
      'true|false|true|true',
    ],
    [
      '{{ semverCompare "1.2.3" "1.2.3" }}|{{ semverCompare "=1.2.3" "1.2.4" }}|{{ semverCompare "!=1.2.3" "1.2.4" }}|{{ semverCompare "<1.2" "1.1.9" }}|{{ semverCompare "<=1.2" "1.2.9" }}|{{ semverCompare ">1.2" "1.2.5" }}',
      'true|false|true|true|true|false',
    ],
    [
      '{{ semverCompare "~1.2.3" "1.2.9" }}|{{ semverCompare "~1.2.3" "1.3.0" }}|{{ semverCompare "^0.2.3" "0.2.9" }}|{{ semverCompare "^0.2.3" "0.3.0" }}|{{ semverCompare "1.x" "1.9.0" }}|{{ semverCompare "*" "5.0.0" }}',
      'true|false|true|false|true|true',
    ],
    [
      '{{ semverCompare ">=1.28.0-0" "1.28.0-rc.1" }}|{{ semverCompare ">=1.28.0" "1.28.0-rc.1" }}|{{ semverCompare ">=1.28" "v1.29.3" }}|{{ semverCompare "1.2 - 1.4" "1.3.0" }}|{{ semverCompare "1.2 - 1.4" "1.5.0" }}',
      'true|false|true|true|false',
    ],
    [
      '{{ .builtin.controlPlane.version | semverCompare ">= v1.29" }}',
      { builtin: { controlPlane: { version: 'v1.29.2' } } },
      'true',
    ],
  ],
  'sprig: reflection and paths': [
    [
      '{{ typeOf 1 }}|{{ typeOf .f }}|{{ typeOf .l }}|{{ typeOf .m }}|{{ typeOf (splitList "," "a") }}|{{ kindOf .l }}|{{ kindIs "float64" .f }}|{{ typeIs "string" "x" }}',
      { f: 1, l: [], m: {} },
      'int|float64|[]interface {}|map[string]interface {}|[]string|slice|true|true',
    ],
    [
      '{{ deepEqual .a .b }}|{{ deepEqual .a .c }}|{{ deepEqual 1 1.0 }}',
      { a: { x: [1] }, b: { x: [1] }, c: { x: [2] } },
      'true|false|false',
    ],
    [
      '{{ base "/a/b.txt" }}|{{ dir "/a/b.txt" }}|{{ ext "a/b.tar.gz" }}|{{ clean "a/../b/./c//" }}|{{ isAbs "/x" }}',
      'b.txt|/a|.gz|b/c|true',
    ],
  ],
  'missingkey=error and no sprig (naming templates)': [
    [
      '{{ .cluster.name }}-{{ .random }}',
      { cluster: { name: 'c1' }, random: 'abcde' },
      'c1-abcde',
      { sprig: false, missingKey: 'error' },
    ],
    [
      '{{ .a.b }}',
      { a: {} },
      err('template: tpl:1:5: executing "tpl" at <.a.b>: map has no entry for key "b"'),
      { sprig: false, missingKey: 'error' },
    ],
    [
      '{{ .a.b }}',
      {},
      err('template: tpl:1:5: executing "tpl" at <.a.b>: map has no entry for key "a"'),
      { sprig: false, missingKey: 'error' },
    ],
    ['{{ index .m "x" }}', { m: {} }, '<no value>', { sprig: false, missingKey: 'error' }],
    ['{{ upper "x" }}', {}, err('template: tpl:1: function "upper" not defined'), { sprig: false }],
  ],
  'parse errors': [
    ['{{ nosuch 1 }}', err('template: tpl:1: function "nosuch" not defined')],
    ['a {{ 1 ', err('template: tpl:1: unclosed action')],
    ['{{ 1 }', err('template: tpl:1: unexpected "}" in operand')],
    ['line1\n{{ if 1 }}x', err('template: tpl:2: unexpected EOF')],
    ['{{ end }}', err('template: tpl:1: unexpected {{end}}')],
    ['{{ else }}', err('template: tpl:1: unexpected {{else}}')],
    ['{{ if }}{{ end }}', err('template: tpl:1: missing value for if')],
    ['{{ $x }}', err('template: tpl:1: undefined variable "$x"')],
    ['{{ if true }}{{ $x := 1 }}{{ end }}{{ $x }}', err('template: tpl:1: undefined variable "$x"')],
    ['{{ break }}', err('template: tpl:1: {{break}} outside {{range}}')],
    ['{{ "x" | 1 }}', err('template: tpl:1: non executable command in pipeline stage 2')],
    ['{{ "abc }}', err('template: tpl:1: unterminated quoted string')],
    ["{{ 'ab' }}", err("template: tpl:1: malformed character constant: 'ab'")],
    ['{{ 1.5.2 }}', err('template: tpl:1: unexpected ".2" in operand')],
    ['{{ true.a }}', err('template: tpl:1: unexpected . after term "true"')],
    ['{{ 99999999999999999999 }}', err('template: tpl:1: integer overflow: "99999999999999999999"')],
    ['{{ 089 }}', err('template: tpl:1: integer overflow: "089"')],
    ['a {{ /* c */ }} b', err('template: tpl:1: unexpected "/" in command')],
    ['{{/* c */ 1 }}', err('template: tpl:1: comment ends before closing delimiter')],
    ['{{/* unclosed', err('template: tpl:1: unclosed comment')],
    ['{{ "\\q" }}', err('template: tpl:1: invalid syntax')],
    ['{{ ( 1 }}', err('template: tpl:1: unclosed left paren')],
    ['{{ 1 ) }}', err('template: tpl:1: unexpected right paren')],
    ['{{ range $a, $b, $c := .l }}{{ end }}', err('template: tpl:1: too many declarations in range')],
    [
      '{{ $x := 1 2 }}',
      err('template: tpl:1:9: executing "tpl" at <1>: can\'t give argument to non-function 1'),
    ],
    ['{{ .a\n| printf\n"%v" }}', { a: 1 }, '1'],
    ['{{ # }}', err('template: tpl:1: unexpected "#" in command')],
  ],
  'execution errors': [
    [
      '{{ .a.b }}',
      { a: null },
      err('template: tpl:1:5: executing "tpl" at <.a.b>: nil pointer evaluating interface {}.b'),
    ],
    [
      '{{ .a.b }}',
      { a: 's' },
      err('template: tpl:1:5: executing "tpl" at <.a.b>: can\'t evaluate field b in type interface {}'),
    ],
    [
      '{{ upper .missing }}',
      err('template: tpl:1:9: executing "tpl" at <.missing>: invalid value; expected string'),
    ],
    [
      '{{ upper .n }}',
      { n: null },
      err(
        'template: tpl:1:9: executing "tpl" at <.n>: wrong type for value; expected string; got interface {}',
      ),
    ],
    ['{{ upper 3 }}', err('template: tpl:1:9: executing "tpl" at <3>: expected string; found 3')],
    [
      '{{ repeat (add 1 1) "x" }}',
      err('template: tpl:1:17: executing "tpl" at <1>: wrong type for value; expected int; got int64'),
    ],
    ['{{ ternary "a" "b" 1 }}', err('template: tpl:1:19: executing "tpl" at <1>: expected bool; found 1')],
    [
      '{{ eq .n 3 }}',
      { n: 3 },
      err(
        'template: tpl:1:3: executing "tpl" at <eq .n 3>: error calling eq: incompatible types for comparison: float64 and int',
      ),
    ],
    [
      '{{ eq .m .m }}',
      { m: {} },
      err(
        'template: tpl:1:3: executing "tpl" at <eq .m .m>: error calling eq: non-comparable type map[]: map[string]interface {}',
      ),
    ],
    [
      '{{ lt true false }}',
      err(
        'template: tpl:1:3: executing "tpl" at <lt true false>: error calling lt: invalid type for comparison',
      ),
    ],
    [
      '{{ len .missing }}',
      err(
        'template: tpl:1:3: executing "tpl" at <len .missing>: error calling len: reflect: call of reflect.Value.Type on zero Value',
      ),
    ],
    ['{{ len 3 }}', err('template: tpl:1:3: executing "tpl" at <len 3>: error calling len: len of type int')],
    [
      '{{ index .l 5 }}',
      { l: [1] },
      err('template: tpl:1:3: executing "tpl" at <index .l 5>: error calling index: index out of range: 5'),
    ],
    [
      '{{ index .l .i }}',
      { l: [1, 2], i: 1 },
      err(
        'template: tpl:1:3: executing "tpl" at <index .l .i>: error calling index: cannot index slice/array with type float64',
      ),
    ],
    [
      '{{ range .n }}{{ . }}{{ end }}',
      { n: 3 },
      err('template: tpl:1:9: executing "tpl" at <.n>: range can\'t iterate over 3'),
    ],
    [
      '{{ range $i, $e := 3 }}{{ end }}',
      err('template: tpl:1:19: executing "tpl" at <3>: can\'t use 3 to iterate over more than one variable'),
    ],
    [
      '{{ range .l }}[{{ .x }}]{{ end }}',
      { l: [null] },
      err('template: tpl:1:18: executing "tpl" at <.x>: nil pointer evaluating interface {}.x'),
    ],
    ['{{ nil }}', err('template: tpl:1:3: executing "tpl" at <nil>: nil is not a command')],
    [
      '{{ .a 1 }}',
      { a: 1 },
      err('template: tpl:1:3: executing "tpl" at <.a>: a is not a method but has arguments'),
    ],
    [
      '{{ $x := 1 }}{{ $x 1 }}',
      err('template: tpl:1:16: executing "tpl" at <$x>: can\'t give argument to non-function $x'),
    ],
    [
      '{{ and }}',
      err('template: tpl:1:3: executing "tpl" at <and>: wrong number of args for and: want at least 1 got 0'),
    ],
    [
      '{{ div 1 0 }}',
      err(
        'template: tpl:1:3: executing "tpl" at <div 1 0>: error calling div: runtime error: integer divide by zero',
      ),
    ],
    [
      '{{ first .missing }}',
      err(
        'template: tpl:1:3: executing "tpl" at <first .missing>: error calling first: runtime error: invalid memory address or nil pointer dereference',
      ),
    ],
    [
      '{{ first "abc" }}',
      err(
        'template: tpl:1:3: executing "tpl" at <first "abc">: error calling first: Cannot find first on type string',
      ),
    ],
    [
      '{{ chunk 2 3 }}',
      err('template: tpl:1:3: executing "tpl" at <chunk 2 3>: error calling chunk: Cannot chunk type int'),
    ],
    [
      '{{ chunk 0 (list 1 2) }}',
      err(
        'template: tpl:1:3: executing "tpl" at <chunk 0 (list 1 2)>: error calling chunk: runtime error: makeslice: len out of range',
      ),
    ],
    [
      '{{ get .n "z" }}',
      { n: null },
      err(
        'template: tpl:1:7: executing "tpl" at <.n>: wrong type for value; expected map[string]interface {}; got interface {}',
      ),
    ],
    [
      '{{ repeat -1 "x" }}',
      err(
        'template: tpl:1:3: executing "tpl" at <repeat -1 "x">: error calling repeat: strings: negative Repeat count',
      ),
    ],
    [
      '{{ substr 4 2 "hello" }}',
      err(
        'template: tpl:1:3: executing "tpl" at <substr 4 2 "hello">: error calling substr: runtime error: slice bounds out of range [4:2]',
      ),
    ],
    [
      '{{ semverCompare "bad" "1.0.0" }}',
      err(
        'template: tpl:1:3: executing "tpl" at <semverCompare "bad" "1.0.0">: error calling semverCompare: improper constraint: bad',
      ),
    ],
    [
      '{{ semverCompare ">1" "bad" }}',
      err(
        'template: tpl:1:3: executing "tpl" at <semverCompare ">1" "bad">: error calling semverCompare: Invalid Semantic Version',
      ),
    ],
    [
      '{{ regexReplaceAll "(" "x" "y" }}',
      err(
        'template: tpl:1:3: executing "tpl" at <regexReplaceAll "(" "x" "y">: error calling regexReplaceAll: regexp: Compile(`(`): error parsing regexp: missing closing ): `(`',
      ),
    ],
    [
      '{{ mustRegexMatch "a**" "x" }}',
      err(
        'template: tpl:1:3: executing "tpl" at <mustRegexMatch "a**" "x">: error calling mustRegexMatch: error parsing regexp: invalid nested repetition operator: `**`',
      ),
    ],
    [
      '{{ fail "stop here" }}',
      err('template: tpl:1:3: executing "tpl" at <fail "stop here">: error calling fail: stop here'),
    ],
    [
      '{{ mustFromJson "bad" }}',
      err(
        'template: tpl:1:3: executing "tpl" at <mustFromJson "bad">: error calling mustFromJson: invalid character \'b\' looking for beginning of value',
      ),
    ],
    [
      'line1\nline2 {{ .a.b }}',
      { a: 's' },
      err('template: tpl:2:11: executing "tpl" at <.a.b>: can\'t evaluate field b in type interface {}'),
    ],
  ],
};

describe('Go templates as upstream Cluster API renders them (outputs checked with Go 1.26)', () => {
  for (const [group, cases] of Object.entries(GO_VERIFIED)) {
    describe(group, () => {
      const rows = cases.map((c) =>
        c.length === 2 ? ([c[0], undefined, c[1], undefined] as const) : ([c[0], c[1], c[2], c[3]] as const),
      );
      it.each(rows)('%s', (template, data, expected, options) => {
        expect(outcome(template, data, options)).toEqual(expected);
      });
    });
  }
});

describe('where this port knowingly differs from Go', () => {
  it('returns keys and values in key order, where sprig returns them in Go map order (random)', () => {
    expect(renderGoTemplate('{{ keys .m }}|{{ values .m }}', { m: { b: 2, a: 1, c: 3 } })).toBe(
      '[a b c]|[1 2 3]',
    );
  });

  it.each([
    ['{{ define "x" }}X{{ end }}{{ template "x" }}', 'template: tpl:1: {{define}} is not supported'],
    ['{{ template "x" }}', 'template: tpl:1: {{template}} is not supported'],
    ['{{ block "b" . }}B{{ end }}', 'template: tpl:1: {{block}} is not supported'],
    ['{{ 1i }}', 'template: tpl:1: complex numbers are not supported: 1i'],
    ['{{ genCA "x" 365 }}', 'template: tpl:1: function "genCA" is not supported'],
    ['{{ now }}', 'template: tpl:1: function "now" not defined'],
    ['{{ env "HOME" }}', 'template: tpl:1: function "env" not defined'],
  ])('refuses %s at parse time', (template, message) => {
    expect(outcome(template)).toEqual(err(message));
  });

  it('refuses data JSON cannot carry', () => {
    expect(failure('{{ . }}', { f: () => 1 }).message).toMatch(/the data cannot be used/);
    expect(failure('{{ . }}', { n: Number.NaN }).message).toMatch(/the data cannot be used/);
  });
});

describe('bounds: the template is written by a cluster owner', () => {
  it(`accepts a template of ${MAX_TEMPLATE_BYTES} bytes and refuses one byte more`, () => {
    expect(renderGoTemplate('x'.repeat(MAX_TEMPLATE_BYTES), {})).toHaveLength(MAX_TEMPLATE_BYTES);
    expect(failure('é'.repeat(MAX_TEMPLATE_BYTES / 2) + 'x').message).toBe(
      `template: tpl: the template is ${MAX_TEMPLATE_BYTES + 1} bytes, more than the ${MAX_TEMPLATE_BYTES} allowed`,
    );
  });

  it('bounds the output, counting bytes', () => {
    expect(renderGoTemplate('{{ repeat 5 "é" }}', {}, { maxOutputBytes: 10 })).toBe('ééééé');
    expect(failure('{{ repeat 6 "é" }}', {}, { maxOutputBytes: 10 }).message).toMatch(
      /repeat would make 12 bytes, more than 10$/,
    );
    expect(failure('{{ range 11 }}x{{ end }}', {}, { maxOutputBytes: 10 }).message).toMatch(
      /output exceeded the 10 bytes allowed$/,
    );
    expect(failure('{{ range until 2000 }}{{ repeat 1000 "x" }}{{ end }}').message).toMatch(
      new RegExp(`output exceeded the ${DEFAULT_MAX_OUTPUT_BYTES} bytes allowed$`),
    );
  });

  it('bounds the strings and values functions make by the output bound, before making them', () => {
    const bounded = [
      '{{ repeat 1000000000 "abc" }}',
      '{{ indent 2000000 "x" }}',
      '{{ nindent 2000000 "x" }}',
      '{{ replace "" (repeat 1000 "x") (repeat 2000 "y") }}',
      '{{ printf "%2000000d" 1 }}',
      '{{ printf "%.2000000f" 1.0 }}',
      '{{ $s := "ab" }}{{ range until 40 }}{{ $s = print $s $s }}{{ end }}',
      '{{ $s := "ab" }}{{ range until 40 }}{{ $s = regexReplaceAll "a" $s "aa" }}{{ end }}',
      '{{ range until 1000000000 }}{{ end }}',
    ];
    for (const template of bounded) {
      expect(failure(template).message).toMatch(/exceed|bound|more than/);
    }
  });

  it('bounds evaluation steps: nodes, commands, loop iterations and what functions work through', () => {
    expect(renderGoTemplate('{{ range 10 }}{{ end }}', {}, { maxSteps: 100 })).toBe('');
    expect(failure('{{ range 1000 }}{{ end }}', {}, { maxSteps: 100 }).message).toMatch(
      /evaluation exceeded the 100 steps allowed$/,
    );
    const steps = new RegExp(`evaluation exceeded the ${DEFAULT_MAX_STEPS} steps allowed$`);
    expect(failure('{{ range 1000000000 }}{{ end }}').message).toMatch(steps);
    expect(
      failure('{{ range until 300 }}{{ range until 300 }}{{ range until 300 }}{{ end }}{{ end }}{{ end }}')
        .message,
    ).toMatch(steps);
    expect(
      failure('{{ $l := list }}{{ range until 100000 }}{{ $l = append $l 1 }}{{ end }}').message,
    ).toMatch(steps);
    // A list that holds itself twice, 40 levels deep: 2^40 comparisons if nothing stopped them.
    expect(
      failure('{{ $d := list }}{{ range until 40 }}{{ $d = list $d $d }}{{ end }}{{ has $d (list $d) }}')
        .message,
    ).toMatch(steps);
  });

  it(`allows nesting ${MAX_NESTING_DEPTH} deep and no deeper`, () => {
    const ifs = (n: number) => '{{ if 1 }}'.repeat(n) + 'x' + '{{ end }}'.repeat(n);
    expect(renderGoTemplate(ifs(MAX_NESTING_DEPTH), {})).toBe('x');
    expect(failure(ifs(MAX_NESTING_DEPTH + 1)).message).toBe(
      `template: tpl:1: nesting is deeper than the ${MAX_NESTING_DEPTH} allowed`,
    );
    const parens = (n: number) => `{{ ${'('.repeat(n)}1${')'.repeat(n)} }}`;
    expect(renderGoTemplate(parens(MAX_NESTING_DEPTH - 1), {})).toBe('1');
    expect(failure(parens(MAX_NESTING_DEPTH + 1)).message).toMatch(/nesting is deeper than/);
    expect(failure('{{ range .l }}'.repeat(4000)).message).toMatch(/nesting is deeper than/);
  });
});

describe("hostile templates end quickly, with a GoTemplateError or Go's answer", () => {
  const quickly = (template: string, data: unknown = {}) => {
    const start = performance.now();
    const result = outcome(template, data);
    expect(performance.now() - start).toBeLessThan(5000);
    return result;
  };

  it("matches catastrophic regular expressions in linear time, as Go's RE2 does", () => {
    expect(quickly(`{{ regexMatch "(a+)+$" "${'a'.repeat(5000)}b" }}`)).toBe('false');
    expect(quickly('{{ regexMatch "(a|a)*c" .s }}', { s: 'a'.repeat(100_000) })).toBe('false');
    expect(quickly('{{ regexMatch "(x+x+)+y" .s }}', { s: 'x'.repeat(50_000) })).toBe('false');
  });

  it('refuses semver constraints built to backtrack', () => {
    expect(quickly('{{ semverCompare .c "1.0.0" }}', { c: `${'1 '.repeat(20_000)}!` })).toEqual(
      err(expect.stringContaining('improper constraint') as unknown as string),
    );
  });

  it('prints and encodes a map that holds itself as an error, not forever', () => {
    const cycle = '{{ $d := dict }}{{ $_ := set $d "self" $d }}';
    expect(quickly(`${cycle}{{ $d }}`)).toEqual(
      err(expect.stringMatching(/nested too deeply to print$/) as unknown as string),
    );
    expect(quickly(`${cycle}{{ toJson $d }}`)).toBe('');
    expect(quickly(`${cycle}{{ mustToJson $d }}`)).toEqual(
      err(expect.stringMatching(/encountered a cycle/) as unknown as string),
    );
    expect(
      quickly('{{ $d := dict }}{{ range until 40 }}{{ $d = dict "a" $d "b" $d }}{{ end }}{{ $d }}'),
    ).toEqual(err(expect.stringMatching(/exceed/) as unknown as string));
  });

  it.each([
    ['abc {{ .a ', 'template: tpl:1: unclosed action'],
    ['{{ "abc }}', 'template: tpl:1: unterminated quoted string'],
    ['{{ `abc }}', 'template: tpl:1: unterminated raw quoted string'],
    ["{{ 'a }}", 'template: tpl:1: unterminated character constant'],
    ['{{/* abc', 'template: tpl:1: unclosed comment'],
    ['{{ (1 }}', 'template: tpl:1: unclosed left paren'],
    ['{{ if 1 }}', 'template: tpl:1: unexpected EOF'],
  ])('reports the unterminated %j with its position', (template, message) => {
    const error = failure(template);
    expect(error.message).toBe(message);
    expect(error.position).toBeGreaterThanOrEqual(0);
    expect(error.position).toBeLessThanOrEqual(template.length);
  });

  it('reports where execution failed', () => {
    const error = failure('ab\ncd {{ .a.b }}', { a: 'x' });
    expect(error.message).toBe(
      'template: tpl:2:8: executing "tpl" at <.a.b>: can\'t evaluate field b in type interface {}',
    );
    expect(error.position).toBe('ab\ncd {{ .a'.length);
  });

  it('throws nothing but GoTemplateError for arbitrary input', () => {
    const pieces = [
      '{{',
      '}}',
      '{{-',
      '-}}',
      ' ',
      '.a',
      '.b.c',
      '$',
      '$x',
      ':=',
      '=',
      '|',
      '(',
      ')',
      '"s"',
      '`r`',
      "'c'",
      '1',
      '-2.5e3',
      '0x1F',
      'nil',
      'true',
      'if',
      'else',
      'end',
      'range',
      'with',
      'break',
      'continue',
      'define',
      'printf',
      '"%v"',
      'len',
      'index',
      'eq',
      'and',
      'dict',
      'list',
      'toJson',
      'regexMatch',
      '"(a+)+"',
      'semverCompare',
      'repeat',
      ',',
      '/*',
      '*/',
      'é',
      '\n',
      '\\',
      '"\\x',
      'default',
      'add',
      'fail',
      'keys',
      'slice',
      'first',
      'until',
      'split',
    ];
    let seed = 42;
    const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    const data = { a: { b: 1 }, b: { c: [1, 'x', null] }, l: [1, 2], s: 'str', n: null };
    for (let i = 0; i < 3000; i++) {
      const template = Array.from(
        { length: 1 + Math.floor(random() * 14) },
        () => pieces[Math.floor(random() * pieces.length)],
      ).join(random() < 0.5 ? ' ' : '');
      const result = outcome(template, data, { maxSteps: 5000 });
      expect(typeof result === 'string' || typeof result.error === 'string').toBe(true);
    }
  });
});
