// Code Mode's dispatch log → protocol events. `run_code` appends `tool/code-dispatch-start` and
// `tool/code-dispatch` to the session of the agent that made the transport call (`exec.agent.session`);
// the adapter observes each agent key's real dsh-session Session and reports every such append, once it
// is accepted into the log, as `{ type: "code-dispatch-start" | "code-dispatch", agent, ...the logged
// data }` (conformance/PROTOCOL.md § Notifications). Under `setup.sessionLog` every accepted append of
// any type is also reported, right after, as `{ type: "session-append", agent, entryType, data }`
// (RUN-058) — except the approval service's audit pair (`approval/*`): the approval seam is the
// fixture's side of the protocol, whose reference counterpart keeps no audit.

const KINDS = new Map([
  ['tool/code-dispatch-start', 'code-dispatch-start'],
  ['tool/code-dispatch', 'code-dispatch'],
]);

/** The protocol event of one logged dispatch entry (`data` is the snapshot the log holds). */
function eventOf(type, agent, data) {
  const event = {
    type,
    agent,
    rootCallId: data.rootCallId,
    parentCallId: data.parentCallId,
    subCallId: data.subCallId,
    name: data.name,
    arguments: data.arguments,
  };
  if (type === 'code-dispatch') {
    event.isError = data.isError;
    event.content = data.content;
  }
  return event;
}

/**
 * Wrap `dshSession.append` (an own property shadowing the class method) so that every accepted dispatch
 * entry (and under `setup.sessionLog` every accepted entry) is emitted on the fixture session; appends the
 * log rejects throw before anything is emitted.
 */
export function observeDispatchLog(fixtureSession, agentName, dshSession) {
  const append = dshSession.append;
  dshSession.append = function appendObserved(type, data, ...opts) {
    const logged = append.call(this, type, data, ...opts);
    const kind = KINDS.get(type);
    if (kind !== undefined) fixtureSession.emit(eventOf(kind, agentName, logged.data));
    if (fixtureSession.setup?.sessionLog === true && !String(type).startsWith('approval/')) {
      fixtureSession.emit({ type: 'session-append', agent: agentName, entryType: type, data: logged.data });
    }
    return logged;
  };
}
