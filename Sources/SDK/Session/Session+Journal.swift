extension Session {
    /// The steps replayed after every reconnect, in order: each subscription
    /// (`RecoveryStepID.subscription`) and each step the app added, with what those do.
    struct Journal {
        /// Changed through the session's ``Session/appendToJournal(_:)`` and
        /// ``Session/removeFromJournal(where:)`` only.
        fileprivate(set) var steps: [RecoveryStepID] = []
        var custom: [RecoveryStepID: CustomStep] = [:]
    }

    /// A step the app added to the journal.
    struct CustomStep {
        let prerequisites: [RecoveryStepID]
        let perform: @Sendable (RecoveryStepContext) async throws -> Void
        var hasRun = false
    }

    /// Adds `id` to the journal's steps and to the mirror ``recoveryJournal`` reads. Each keeps
    /// an array of its own, changed the same way: one array shared by both (the mirror set to the
    /// journal's after each change) was copied whole at the next append, so subscribing to N
    /// channels cost N² copies of a step.
    func appendToJournal(_ id: RecoveryStepID) {
        journal.steps.append(id)
        diagnostics.update { $0.journal.append(id) }
    }

    /// Removes the journal's steps that `isRemoved` picks, from the mirror too.
    func removeFromJournal(where isRemoved: (RecoveryStepID) -> Bool) {
        let count = journal.steps.count
        journal.steps.removeAll(where: isRemoved)
        guard journal.steps.count != count else { return }
        diagnostics.update { $0.journal.removeAll(where: isRemoved) }
    }
}
