import {Chalk} from 'chalk'

/**
 * Terminal styling in one place: colour only when stdout is a terminal, never when NO_COLOR is
 * set (https://no-color.org) or TERM is dumb.
 */
export const isTerminal = (stream: NodeJS.WriteStream = process.stdout) => Boolean(stream.isTTY)

const colourful = isTerminal() && process.env.NO_COLOR === undefined && process.env.TERM !== 'dumb'

export const style = new Chalk({level: colourful ? 1 : 0})
