// Workflow-safe: the run's own account of its effects, while it runs.
import { defineQuery } from '@temporalio/workflow';
import type { JournalEntry } from '../common/journal';

export const journalQuery = defineQuery<JournalEntry[]>('journal');
