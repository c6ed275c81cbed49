/**
 * The commands index: oclif's explicit discovery reads this object (package.json
 * `oclif.commands`) instead of scanning folders, and the bundle (src/bq.ts) carries it.
 * A new command is added here as well as in its own file; test/unit/commands-index.test.ts
 * checks that every file under src/commands is listed.
 */
import CompleteQueues from './__complete-queues.js'
import ContextAdd from './context/add.js'
import ContextList from './context/list.js'
import ContextRemove from './context/remove.js'
import ContextShow from './context/show.js'
import ContextUse from './context/use.js'
import DlqEdit from './dlq/edit.js'
import DlqInspect from './dlq/inspect.js'
import DlqLs from './dlq/ls.js'
import DlqPurge from './dlq/purge.js'
import DlqRecover from './dlq/recover.js'
import DlqRedrive from './dlq/redrive.js'
import DlqTriage from './dlq/triage.js'
import FishCompletion from './fish-completion.js'
import Peek from './peek.js'
import Publish from './publish.js'
import Replay from './replay.js'
import RunsList from './runs/list.js'
import RunsShow from './runs/show.js'
import Validate from './validate.js'

export const COMMANDS = {
  '__complete-queues': CompleteQueues,
  'context:add': ContextAdd,
  'context:list': ContextList,
  'context:remove': ContextRemove,
  'context:show': ContextShow,
  'context:use': ContextUse,
  'dlq:edit': DlqEdit,
  'dlq:inspect': DlqInspect,
  'dlq:ls': DlqLs,
  'dlq:purge': DlqPurge,
  'dlq:recover': DlqRecover,
  'dlq:redrive': DlqRedrive,
  'dlq:triage': DlqTriage,
  'fish-completion': FishCompletion,
  peek: Peek,
  publish: Publish,
  replay: Replay,
  'runs:list': RunsList,
  'runs:show': RunsShow,
  validate: Validate,
}
