/**
 * A fish completion script for bq, written from the loaded command list: the autocomplete
 * plugin writes bash, zsh and PowerShell only. Commands and topics complete by the words typed
 * so far (topic separator: a space), flags per command, and `<queue>` arguments from the broker
 * the command line points at (`bq __complete-queues`, silent on errors).
 */

export interface CompletableFlag {
  name: string
  char?: string
  summary?: string
  /** Takes a value (`--limit 5`), unlike a boolean switch. */
  takesValue: boolean
}

export interface CompletableCommand {
  /** oclif's id, `dlq:redrive`. */
  id: string
  summary?: string
  flags: CompletableFlag[]
  /** The first argument is a queue name (completed from the broker). */
  queueArgument: boolean
}

export interface CompletableTopic {
  name: string
  summary?: string
}

/** Fish's single-quoted string: only `\` and `'` need escaping. */
function quote(text: string): string {
  return `'${text.replaceAll('\\', '\\\\').replaceAll("'", "\\'")}'`
}

/** One line of description, as fish shows it beside a candidate. */
function describe(text: string | undefined, bin: string): string {
  const line = (text ?? '').split('\n')[0].replaceAll('<%= config.bin %>', bin).trim()
  return line === '' ? '' : ` -d ${quote(line.length > 80 ? `${line.slice(0, 77)}...` : line)}`
}

export function fishCompletionScript(bin: string, commands: CompletableCommand[], topics: CompletableTopic[]): string {
  const ids = commands.map((command) => command.id).sort()
  const lines: string[] = [
    `# fish completion for ${bin}: ${bin} fish-completion > ~/.config/fish/completions/${bin}.fish`,
    `set -g __${bin}_commands ${ids.join(' ')}`,
    '',
    `# The words typed after ${bin} that are not flags, joined with ':' (oclif's command ids).`,
    `function __${bin}_words`,
    '    set -l words',
    '    for word in (commandline -opc)[2..-1]',
    "        string match -q -- '-*' $word; and continue",
    '        set -a words $word',
    '    end',
    "    string join ':' $words",
    'end',
    '',
    '# The longest command id the typed words start with (what the flags and arguments belong to).',
    `function __${bin}_command`,
    `    set -l typed (__${bin}_words)`,
    "    set -l found ''",
    `    for id in $__${bin}_commands`,
    '        if test "$typed" = "$id"; or string match -q -- "$id:*" "$typed"',
    '            if test (string length -- $id) -gt (string length -- "$found")',
    '                set found $id',
    '            end',
    '        end',
    '    end',
    '    echo $found',
    'end',
    '',
    `function __${bin}_is`,
    `    test "$(__${bin}_command)" = "$argv[1]"`,
    'end',
    '',
    '# No command yet, and the words so far are exactly this topic path ("" at the start).',
    `function __${bin}_at`,
    `    test -z "$(__${bin}_command)"; and test "$(__${bin}_words)" = "$argv[1]"`,
    'end',
    '',
    '# Queue names from the broker the command line names (-b/--broker, --context), if any.',
    `function __${bin}_queues`,
    '    set -l args',
    '    set -l words (commandline -opc)',
    '    for i in (seq (count $words))',
    '        switch $words[$i]',
    "            case -b --broker --context",
    '                set -a args $words[$i] $words[(math $i + 1)]',
    "            case '--broker=*' '--context=*'",
    '                set -a args $words[$i]',
    '        end',
    '    end',
    `    ${bin} __complete-queues (commandline -ct) $args 2>/dev/null`,
    'end',
    '',
    `complete -c ${bin} -f`,
  ]
  // Each level offers the next word: a command, or a topic that leads to some.
  const offered = new Set<string>()
  const offer = (parent: string, word: string, summary: string | undefined) => {
    const key = `${parent} ${word}`
    if (offered.has(key)) return
    offered.add(key)
    lines.push(`complete -c ${bin} -n ${quote(`__${bin}_at '${parent}'`)} -a ${quote(word)}${describe(summary, bin)}`)
  }
  const topicSummary = new Map(topics.map((topic) => [topic.name, topic.summary]))
  for (const command of [...commands].sort((a, b) => a.id.localeCompare(b.id))) {
    const parts = command.id.split(':')
    for (let depth = 0; depth < parts.length; depth++) {
      const parent = parts.slice(0, depth).join(':')
      const here = parts.slice(0, depth + 1).join(':')
      offer(parent, parts[depth], depth === parts.length - 1 ? command.summary : topicSummary.get(here))
    }
    const when = quote(`__${bin}_is ${command.id}`)
    for (const flag of command.flags) {
      const short = flag.char === undefined ? '' : ` -s ${flag.char}`
      lines.push(`complete -c ${bin} -n ${when} -l ${flag.name}${short}${flag.takesValue ? ' -r' : ''}${describe(flag.summary, bin)}`)
    }
    if (command.queueArgument) lines.push(`complete -c ${bin} -n ${when} -a '(__${bin}_queues)'`)
  }
  return `${lines.join('\n')}\n`
}
