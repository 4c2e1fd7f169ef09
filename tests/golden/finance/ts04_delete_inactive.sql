-- ledgerflow 0.1.0: project ts04_delete_inactive (id 0b000000-0000-4000-8000-000000000004, version 1)
-- Parameters: :period_identifier, :period_start, :period_end, :run_started_at
-- Inputs (views the runner creates from each dataset's resolved locations, normalised to the
-- declared columns plus system columns):
--   ds_gl <- dataset gl (period, latest active version)
--   ds_accounts_v2 <- dataset accounts (period, version 2)

-- lf_stage_1: operations input, 1-2; materialised by the runner before the next statement
WITH `input` AS (
  SELECT
    `journal_id`,
    `line_number`,
    `posting_date`,
    `account_code`,
    `cost_center_code`,
    `currency`,
    `amount_local`,
    `amount_reporting`,
    `description`,
    `source_system`,
    `_row_id`,
    `_deleted`,
    `_updated_at`,
    `_period`,
    `_labels`,
    `_source_dataset`,
    `_operation_seq`,
    0 AS `_lf_origin`,
    CAST(NULL AS INT) AS `_lf_deleted_by`
  FROM `ds_gl`
  WHERE
    (
      `_period` = :period_identifier
      OR (
        `_period` >= CASE
          WHEN :period_identifier LIKE '%Q%'
          THEN DATE_FORMAT(:period_start, 'yyyy-MM')
          ELSE CONCAT(:period_identifier, '-')
        END
        AND `_period` < CASE
          WHEN :period_identifier LIKE '%Q%'
          THEN CONCAT(DATE_FORMAT(:period_end, 'yyyy-MM'), '.')
          ELSE CONCAT(:period_identifier, '.')
        END
      )
    )
    AND (
      `_period` IS NOT DISTINCT FROM :period_identifier
      OR (
        LENGTH(`_period`) IN (4, 7, 10)
        AND `_period` RLIKE '^[0-9]{4}(-(Q[1-4]|[0-9]{2}(-[0-9]{2})?))?$'
        AND (
          SUBSTRING(`_period`, 6, 1) = 'Q'
          OR NOT TRY_TO_DATE(RPAD(`_period`, 10, '-01')) IS NULL
        )
      )
    )
), `op_001_join_acct` AS (
  SELECT
    `code` AS `acct__code`,
    `name` AS `acct__name`,
    `type` AS `acct__type`,
    `category` AS `acct__category`,
    `is_active` AS `acct__is_active`,
    `_period` AS `acct___period`,
    COUNT(*) OVER (PARTITION BY `code`) AS `acct___lf_matches`
  FROM (
    SELECT /*+ COALESCE(1) */
      `code`,
      `name`,
      `type`,
      `category`,
      `is_active`,
      `_period`
    FROM `ds_accounts_v2`
    WHERE
      NOT `_deleted`
      AND (
        `_period` = :period_identifier
        OR (
          `_period` >= CASE
            WHEN :period_identifier LIKE '%Q%'
            THEN DATE_FORMAT(:period_start, 'yyyy-MM')
            ELSE CONCAT(:period_identifier, '-')
          END
          AND `_period` < CASE
            WHEN :period_identifier LIKE '%Q%'
            THEN CONCAT(DATE_FORMAT(:period_end, 'yyyy-MM'), '.')
            ELSE CONCAT(:period_identifier, '.')
          END
        )
      )
      AND (
        `_period` IS NOT DISTINCT FROM :period_identifier
        OR (
          LENGTH(`_period`) IN (4, 7, 10)
          AND `_period` RLIKE '^[0-9]{4}(-(Q[1-4]|[0-9]{2}(-[0-9]{2})?))?$'
          AND (
            SUBSTRING(`_period`, 6, 1) = 'Q'
            OR NOT TRY_TO_DATE(RPAD(`_period`, 10, '-01')) IS NULL
          )
        )
      )
  ) AS `join_rows`
), `op_001_update` AS (
  SELECT
    `transactions`.`journal_id`,
    `transactions`.`line_number`,
    `transactions`.`posting_date`,
    `transactions`.`account_code`,
    `transactions`.`cost_center_code`,
    `transactions`.`currency`,
    `transactions`.`amount_local`,
    `transactions`.`amount_reporting`,
    `transactions`.`description`,
    `transactions`.`source_system`,
    `transactions`.`_row_id`,
    `transactions`.`_deleted`,
    CASE
      WHEN NOT `transactions`.`_deleted`
      THEN :run_started_at
      ELSE `transactions`.`_updated_at`
    END AS `_updated_at`,
    `transactions`.`_period`,
    `transactions`.`_labels`,
    `transactions`.`_source_dataset`,
    `transactions`.`_operation_seq`,
    CASE WHEN NOT `transactions`.`_deleted` THEN `acct`.`acct__is_active` END AS `account_active`,
    `transactions`.`_lf_origin`,
    `transactions`.`_lf_deleted_by`
  FROM `input` AS `transactions`
  LEFT JOIN `op_001_join_acct` AS `acct`
    ON `transactions`.`account_code` = `acct`.`acct__code`
    AND NOT `transactions`.`_deleted`
  WHERE
    (
      COALESCE(`acct`.`acct___lf_matches`, 1) <= 1
      OR RAISE_ERROR(
        CONCAT(
          'ledgerflow: runtime join \'acct\' of operation 1 matched ',
          CAST(`acct`.`acct___lf_matches` AS STRING),
          ' rows of dataset \'accounts\' for one working row; join key: ',
          CONCAT_WS(', ', CAST(`transactions`.`account_code` AS STRING))
        )
      )
    )
), `op_002_delete` AS (
  SELECT
    `journal_id`,
    `line_number`,
    `posting_date`,
    `account_code`,
    `cost_center_code`,
    `currency`,
    `amount_local`,
    `amount_reporting`,
    `description`,
    `source_system`,
    `_row_id`,
    `_deleted` OR COALESCE(NOT `_deleted` AND (
      `account_active` = FALSE
    ), FALSE) AS `_deleted`,
    CASE
      WHEN NOT `_deleted` AND (
        `account_active` = FALSE
      )
      THEN :run_started_at
      ELSE `_updated_at`
    END AS `_updated_at`,
    `_period`,
    `_labels`,
    `_source_dataset`,
    `_operation_seq`,
    `account_active`,
    `_lf_origin`,
    CASE
      WHEN COALESCE(NOT `_deleted` AND (
        `account_active` = FALSE
      ), FALSE)
      THEN 2
      ELSE `_lf_deleted_by`
    END AS `_lf_deleted_by`
  FROM `op_001_update`
)
SELECT
  *
FROM `op_002_delete`;

-- output_003: operation 3 'Write active lines' writes table ts04_active_lines
SELECT
  `journal_id`,
  `line_number`,
  `posting_date`,
  `account_code`,
  `cost_center_code`,
  `currency`,
  `amount_local`,
  `amount_reporting`,
  `description`,
  `source_system`,
  `_row_id`,
  `_deleted`,
  `_updated_at`,
  `_period`,
  `_labels`,
  `_source_dataset`,
  `_operation_seq`,
  `account_active`
FROM `lf_stage_1`
WHERE
  NOT `_deleted`;

-- output_004: operation 4 'Write all lines including deleted' writes table ts04_all_lines
SELECT
  `journal_id`,
  `line_number`,
  `posting_date`,
  `account_code`,
  `cost_center_code`,
  `currency`,
  `amount_local`,
  `amount_reporting`,
  `description`,
  `source_system`,
  `_row_id`,
  `_deleted`,
  `_updated_at`,
  `_period`,
  `_labels`,
  `_source_dataset`,
  `_operation_seq`,
  `account_active`
FROM `lf_stage_1`;

-- Checks (evaluated by the run on the rows it stages, before the commit point; `input` is the
-- rows after the period filter, input_live those of them not deleted (what a reconcile from the input
-- to an output that leaves deleted rows out counts), output_NNN the rows output NNN writes):

-- check lines_accounted_for: reconcile input -> output 3, explained by 2, tolerance 0; on violation: fail
SELECT
  COUNT(*) AS `count`
FROM `input_live`;
SELECT
  COUNT(*) AS `count`
FROM `output_003`;

